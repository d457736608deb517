// CPU time per kind of process on this machine, read from /proc: benchmarks use it to say where
// a cost goes (Xvnc, the docker exec clients, dockerd, relay.py in the sandbox, this process…).
// Linux only; container processes are host processes, so the sandbox's show up too.
import { readdirSync, readFileSync } from 'node:fs';

/** clock ticks a second (USER_HZ): 100 on every Linux this project runs on. */
const TICKS = 100;

/** The kinds a benchmark reports; anything else is "other". */
export type ProcKind = 'Xvnc' | 'recorder process' | 'relay.py' | 'docker exec clients' | 'dockerd' | 'containerd(-shim)' | 'this process' | 'flood workload' | 'other';

function kindOf(pid: number, comm: string, cmdline: string): ProcKind {
  if (pid === process.pid) {
    return 'this process';
  }
  if (comm === 'Xvnc') {
    return 'Xvnc';
  }
  // The flight recorder's own process (src/core/recorderProcess.ts forks dist/recorder.js).
  if (cmdline.includes('dist/recorder.js')) {
    return 'recorder process';
  }
  // The docker client's command line holds the relay's source too: it is told apart first.
  if (comm === 'docker') {
    return 'docker exec clients';
  }
  if (comm.startsWith('python') && cmdline.includes('Bot Screen relay')) {
    return 'relay.py';
  }
  if (comm === 'dockerd') {
    return 'dockerd';
  }
  if (comm.startsWith('containerd')) {
    return 'containerd(-shim)';
  }
  if (['xfce4-terminal', 'base64', 'head', 'bash'].includes(comm)) {
    return 'flood workload';
  }
  return 'other';
}

/** pid → [kind, ticks used so far]. */
export type ProcSample = Map<number, [ProcKind, number]>;

export function sampleProcs(): ProcSample {
  const sample: ProcSample = new Map();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) {
      continue;
    }
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      // comm is in parentheses and may hold spaces: the fields after its closing one are fixed.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      // utime and stime are fields 14 and 15 of stat (1-based), i.e. 11 and 12 after comm/state.
      const ticks = Number(fields[11]) + Number(fields[12]);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      sample.set(pid, [kindOf(pid, comm, cmdline), ticks]);
    } catch {
      // exited meanwhile
    }
  }
  return sample;
}

/**
 * CPU % (100 = one core) per kind between two samples over `ms`. A process started in between
 * counts whole; one that exited in between is missed (the recorder's relay of a segment that
 * ended: a slight under-count of its kinds).
 */
export function cpuByKind(before: ProcSample, after: ProcSample, ms: number): Map<ProcKind, number> {
  const out = new Map<ProcKind, number>();
  for (const [pid, [kind, ticks]] of after) {
    const used = ticks - (before.get(pid)?.[1] ?? 0);
    out.set(kind, (out.get(kind) ?? 0) + (100 * used) / TICKS / (ms / 1000));
  }
  return out;
}
