import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BACKENDS, parseBackend, parsePlacementSetting, placementLabel, resolvePlacement, type BackendName, type PlacementSetting } from '../../src/core/placement';

// The research doc's decision table (§3), with this project's backend names.
const TABLE: Record<BackendName, Record<PlacementSetting, string>> = {
  local: { auto: 'host', terminal: 'host', gateway: 'host' },
  docker: { auto: 'sandbox', terminal: 'sandbox', gateway: 'host' },
  podman: { auto: 'sandbox', terminal: 'sandbox', gateway: 'host' },
  ssh: { auto: 'sandbox', terminal: 'sandbox', gateway: 'host' },
  apptainer: { auto: 'sandbox', terminal: 'sandbox', gateway: 'host' },
  kubernetes: { auto: 'sandbox', terminal: 'sandbox', gateway: 'host' },
  modal: { auto: 'refused', terminal: 'refused', gateway: 'host' },
  daytona: { auto: 'refused', terminal: 'refused', gateway: 'host' },
  vercel: { auto: 'refused', terminal: 'refused', gateway: 'host' },
};

test('every backend and setting lands where the decision table says', () => {
  for (const backend of BACKENDS) {
    for (const setting of ['auto', 'terminal', 'gateway'] as const) {
      const placement = resolvePlacement(backend, setting);
      assert.equal(placement.where, TABLE[backend][setting], `${backend} / ${setting}`);
      assert.equal(placement.backend, backend);
    }
  }
});

test('the host placement says why: the local backend, or the gateway opt-in', () => {
  assert.deepEqual(resolvePlacement('local', 'terminal'), { where: 'host', backend: 'local', why: 'localBackend' });
  assert.deepEqual(resolvePlacement('modal', 'gateway'), { where: 'host', backend: 'modal', why: 'gatewayOptIn' });
});

test('labels: gateway, terminal:<backend>, refused:<backend>', () => {
  assert.equal(placementLabel(resolvePlacement('docker', 'auto')), 'terminal:docker');
  assert.equal(placementLabel(resolvePlacement('docker', 'gateway')), 'gateway');
  assert.equal(placementLabel(resolvePlacement('daytona', 'terminal')), 'refused:daytona');
});

test('placement setting: trimmed, case-insensitive; unknown means auto and is reported', () => {
  assert.deepEqual(parsePlacementSetting(' Gateway '), { value: 'gateway' });
  assert.deepEqual(parsePlacementSetting(undefined), { value: 'auto' });
  assert.deepEqual(parsePlacementSetting('sandbox'), { value: 'auto', unknown: 'sandbox' });
  assert.deepEqual(parsePlacementSetting(42), { value: 'auto', unknown: '42' });
});

test('backend setting: known names and aliases; an unknown name is never guessed', () => {
  assert.deepEqual(parseBackend('Docker'), { value: 'docker' });
  assert.deepEqual(parseBackend('singularity'), { value: 'apptainer' });
  assert.deepEqual(parseBackend('vercel_sandbox'), { value: 'vercel' });
  assert.deepEqual(parseBackend('dockr'), { value: undefined, unknown: 'dockr' });
});
