# The video-like workload of the benchmarks (test/bench/same-run.bench.mjs, recorder.bench.ts):
# run in a maximised terminal, it redraws the whole terminal 30 times a second with a diagonal
# band that moves one column a frame, so every frame changes most of the screen.
import os, sys, time
t, period = 0, 1 / 30
next_at = time.monotonic()
while True:
    cols, rows = os.get_terminal_size()
    lines = []
    for r in range(rows - 1):
        x = (t * 2 + r) % cols
        line = [" "] * cols
        for k in range(12):
            line[(x + k) % cols] = "#"
        lines.append("".join(line))
    sys.stdout.write("\x1b[H" + "\n".join(lines))
    sys.stdout.flush()
    t += 1
    next_at += period
    time.sleep(max(0, next_at - time.monotonic()))
