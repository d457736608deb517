// Thumbnail cost (issue 12's benchmark list): what one grab of the Screens overview costs, in ms
// and bytes, on a real screen in a real Docker sandbox: idle desktop and a screen full of
// changing text. Prints a table; asserts nothing (numbers vary a lot on shared machines).
import { displayEnv } from '../../src/core/actions/sessionExec';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import { grabThumbnail, type Thumbnail } from '../../src/core/thumbnail';
import { removeTestContainers, settings, sh, tempMarkers, testLog } from '../support/env';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const GEOMETRY = process.env.BENCH_GEOMETRY ?? '1280x800';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.9))];

async function rounds(grab: () => Promise<Thumbnail>): Promise<Thumbnail[]> {
  const out: Thumbnail[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    out.push(await grab());
  }
  return out;
}

function row(name: string, grabs: Thumbnail[]): string {
  const ms = grabs.map((g) => g.ms);
  const wire = grabs.map((g) => g.wireBytes);
  const jpeg = grabs.map((g) => g.jpeg.length);
  const icon = grabs.map((g) => g.icon.length);
  return `| ${name} | ${median(ms)} | ${p90(ms)} | ${median(wire)} | ${median(jpeg)} | ${median(icon)} | ${grabs[0].width}x${grabs[0].height} |`;
}

async function main(): Promise<void> {
  const config = settings({ geometry: GEOMETRY });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  try {
    const status = await controller.start();
    if (status.state !== 'running') {
      throw new Error(`the screen did not start: ${JSON.stringify(status.problem)}`);
    }
    const { sandbox, screen } = controller.runningSandbox()!;
    const grab = () => grabThumbnail(sandbox, displayEnv(screen));
    await grab(); // warm-up: python3 and libX11 in the page cache
    const idle = await rounds(grab);
    // A terminal that fills the screen with random text without end.
    const container = status.sandbox!.id;
    sh('docker', ['exec', '-d', '-u', 'pn', container, 'env', ...Object.entries(displayEnv(screen)).map(([k, v]) => `${k}=${v}`),
      'xfce4-terminal', '--disable-server', '--maximize', '-x', 'sh', '-c', 'while :; do head -c 3000 /dev/urandom | base64; done']);
    await new Promise((r) => setTimeout(r, 3000));
    const busy = await rounds(grab);
    console.log(`\nThumbnail cost per grab, screen ${GEOMETRY}, ${ROUNDS} grabs each (docker exec + python3 grab/shrink + JPEG encode here)\n`);
    console.log('| screen | ms median | ms p90 | bytes from the sandbox | JPEG bytes (tooltip) | JPEG bytes (icon) | tooltip size |');
    console.log('|---|---|---|---|---|---|---|');
    console.log(row('idle desktop', idle));
    console.log(row('terminal flood', busy));
  } finally {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
