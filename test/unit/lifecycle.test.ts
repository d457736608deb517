// The one lifetime shape: an owner disposes what it registered, last first, exactly once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Disposable, toDisposable } from '../../src/core/lifecycle';

class Owner extends Disposable {}

describe('Disposable', () => {
  test('disposes what it registered, last registered first, once however often it is disposed', () => {
    const order: string[] = [];
    const owner = new Owner();
    const first = owner.register(toDisposable(() => order.push('first')));
    owner.register({ dispose: () => order.push('second') });
    assert.equal(typeof first.dispose, 'function', 'register returns what it was given');
    owner.dispose();
    owner.dispose();
    assert.deepEqual(order, ['second', 'first']);
  });

  test('a child registered after its owner was disposed is disposed at once', () => {
    const owner = new Owner();
    owner.dispose();
    let disposed = 0;
    owner.register(toDisposable(() => disposed++));
    assert.equal(disposed, 1);
  });

  test('toDisposable ends its subscription once', () => {
    let ended = 0;
    const subscription = toDisposable(() => ended++);
    subscription.dispose();
    subscription.dispose();
    assert.equal(ended, 1);
  });
});
