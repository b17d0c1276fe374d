#!/usr/bin/env python3
"""Interleaved A/B of two kiln_bench builds: the same benchmarks, alternating A and B.

usage: bench/ab.py A/kiln_bench B/kiln_bench [--rounds 3] [--filter REGEX] [--min-time 0.1]

Each round runs A then B (then B then A in the next round, so that drift in the machine
averages out) with --benchmark_repetitions=3 and JSON output; a benchmark's time per side is
the median over all its repetitions of all rounds. Prints a Markdown table: A, B, B/A, and the
spread (max/min of the per-round medians, the larger of the two sides) against which a B/A
should be read. The rows are grouped as kiln_bench names them (warm calls, eager ops, cold
compiles, large rows...). KILN_DISABLE_CACHE=1 and KILN_NUM_THREADS (default 2) are set for
both sides.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile


def run(binary, args, env):
    with tempfile.NamedTemporaryFile(suffix='.json', delete=False) as f:
        out = f.name
    cmd = [binary, '--benchmark_out=' + out, '--benchmark_out_format=json', '--benchmark_color=false'] + args
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    data = json.load(open(out))
    os.unlink(out)
    times = {}
    for b in data['benchmarks']:
        if b.get('run_type') != 'iteration' or b.get('error_occurred'):
            continue
        unit = {'ns': 1e-9, 'us': 1e-6, 'ms': 1e-3, 's': 1.0}[b.get('time_unit', 'ns')]
        times.setdefault(b['run_name'], []).append(b['real_time'] * unit)
    return times


def fmt(s):
    if s < 1e-3:
        return f'{s * 1e6:.2f} µs'
    if s < 1:
        return f'{s * 1e3:.3f} ms'
    return f'{s:.2f} s'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('a')
    ap.add_argument('b')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--filter', default='')
    ap.add_argument('--min-time', default='0.1')
    o = ap.parse_args()
    env = dict(os.environ)
    env.setdefault('KILN_DISABLE_CACHE', '1')
    env.setdefault('KILN_NUM_THREADS', '2')
    args = ['--benchmark_repetitions=3', f'--benchmark_min_time={o.min_time}']
    if o.filter:
        args.append('--benchmark_filter=' + o.filter)
    samples = {'A': {}, 'B': {}}   # side -> name -> all repetition times
    rounds = {'A': {}, 'B': {}}    # side -> name -> per-round medians
    for r in range(o.rounds):
        order = ['A', 'B'] if r % 2 == 0 else ['B', 'A']
        for side in order:
            t = run(o.a if side == 'A' else o.b, args, env)
            for name, v in t.items():
                samples[side].setdefault(name, []).extend(v)
                rounds[side].setdefault(name, []).append(statistics.median(v))
        print(f'round {r + 1}/{o.rounds} done', file=sys.stderr)
    names = [n for n in samples['A'] if n in samples['B']]
    print(f'A: {o.a}\nB: {o.b}\n{o.rounds} interleaved rounds, 3 repetitions each\n')
    print('| benchmark | A | B | B/A | spread |')
    print('|---|---|---|---|---|')
    for n in names:
        a = statistics.median(samples['A'][n])
        b = statistics.median(samples['B'][n])
        spread = max(max(v) / min(v) for v in (rounds['A'][n], rounds['B'][n]))
        print(f'| {n} | {fmt(a)} | {fmt(b)} | {b / a:.3f} | {spread:.3f} |')


if __name__ == '__main__':
    main()
