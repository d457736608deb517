import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isValidContainerRef, isValidImage, parseGeometry } from '../../src/core/validate';

test('image names: registry, tag and digest pass; metacharacters and leading dashes do not', () => {
  for (const ok of ['botscreen/sandbox:desktop', 'debian', 'localhost:5000/a/b:1.0', `x@sha256:${'a'.repeat(64)}`]) {
    assert.ok(isValidImage(ok), ok);
  }
  for (const bad of ['', '-v', '--privileged', 'a b', 'a;b', 'a$(id)', 'a`id`', 'a\nb', "a'b", 'a//b', 'x'.repeat(300)]) {
    assert.ok(!isValidImage(bad), JSON.stringify(bad));
  }
});

test('container refs', () => {
  assert.ok(isValidContainerRef('agent_sandbox-1.2'));
  assert.ok(!isValidContainerRef('-x'));
  assert.ok(!isValidContainerRef('a b'));
});

test('geometry: WIDTHxHEIGHT within 320..8192', () => {
  assert.deepEqual(parseGeometry('1280x800'), { width: 1280, height: 800 });
  assert.deepEqual(parseGeometry(' 1920x1080 '), { width: 1920, height: 1080 });
  for (const bad of ['1280', '1280x', 'x800', '100x100', '9999x800', '1280X800', '1280x800x2', '-1280x800']) {
    assert.equal(parseGeometry(bad), undefined, bad);
  }
});
