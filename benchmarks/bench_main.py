"""Throughput of the mocap command: frames per second per stage on one clip, and the whole
pipeline over 8 copies of a real clip in one process vs dask.distributed (LocalCluster,
2 workers on 127.0.0.1). Run: python benchmarks/bench_main.py"""
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jointmath.__main__ import local_cluster, run_dask, run_local  # noqa: E402

CLIP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data", "01_01.bvh")  # CMU 01_01


ROUNDS = 5


def main():
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for k in range(8):
            files.append(os.path.join(tmp, f"copy{k}.bvh"))
            shutil.copy(CLIP, files[-1])
        first = run_local(files[:1], 10, None, None)[0]
        print(f"{'stage':20s} {'frames/s':>12s}   (one clip, {first['frames']} frames x {first['joints']} joints)")
        for name, fps in first["frames_per_second"].items():
            print(f"{name:20s} {fps:12.0f}")
        frames = first["frames"] * len(files)
        single, dask = [], []
        with local_cluster() as cluster:
            run_dask(files[:2], 10, None, None, cluster.scheduler_address)  # warm the workers' imports
            for _ in range(ROUNDS):  # alternated, so that both see the same machine load
                start = time.perf_counter()
                run_local(files, 10, None, None)
                single.append(time.perf_counter() - start)
                start = time.perf_counter()
                run_dask(files, 10, None, None, cluster.scheduler_address)
                dask.append(time.perf_counter() - start)
        ratio = statistics.median(s / d for s, d in zip(single, dask))
        print(f"\n8 clips, one process : {frames / statistics.median(single):10.0f} frames/s (median of {ROUNDS})")
        print(f"8 clips, dask local  : {frames / statistics.median(dask):10.0f} frames/s (running 2-worker cluster, "
              f"client connected per run)")
        print(f"median per-round throughput ratio dask / one process: {ratio:.2f}x")


if __name__ == "__main__":
    main()
