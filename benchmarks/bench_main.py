"""Throughput of the mocap command: frames per second per stage on one clip, and the whole
pipeline over 8 copies of a real clip in one process vs dask.distributed (LocalCluster,
2 workers on 127.0.0.1). Run: python benchmarks/bench_main.py"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jointmath.__main__ import run_dask, run_local  # noqa: E402

CLIP = "/work/shared/data/mocap/01_01.bvh"


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
        start = time.perf_counter()
        run_local(files, 10, None, None)
        single = time.perf_counter() - start
        from dask.distributed import LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster:
            run_dask(files[:2], 10, None, None, cluster.scheduler_address)  # warm the workers' imports
            start = time.perf_counter()
            run_dask(files, 10, None, None, cluster.scheduler_address)
            dask = time.perf_counter() - start
        print(f"\n8 clips, one process : {frames / single:10.0f} frames/s")
        print(f"8 clips, dask local  : {frames / dask:10.0f} frames/s (running cluster), "
              f"ratio {single / dask:.2f}x")


if __name__ == "__main__":
    main()
