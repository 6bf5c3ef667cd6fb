#!/usr/bin/env python3
"""How far mpv shows an item before the group's queue moves on.

Hosts a two-item queue (the 4 s sample clips) with `tandem host --player mpv` (headless), plays
it, and reads the host's mpv over its IPC socket every 5 ms: the furthest `time-pos` read while
mpv plays the first clip, until it plays the second. The rest of the 4 s was not shown. Prints
one line a run.

Usage: scripts/mpv-item-end.py [TANDEM] [RUNS]    (default .build/release/tandem, 3 runs)
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TANDEM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release/tandem")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
FIRST, SECOND = "h264-aac.mp4", "h264-bframes.mp4"
CLIPS = [os.path.join(ROOT, "Samples/Media", name) for name in (FIRST, SECOND)]


def run_once(run):
    directory = tempfile.mkdtemp()
    ipc = os.path.join(directory, "mpv.sock")
    host = subprocess.Popen([TANDEM, "host", *CLIPS, "--bind", "127.0.0.1", "--port", "0", "--name", "ana",
                             "--events", "json", "--player", "mpv", "--mpv-ipc", ipc, "--mpv-args", "--vo=null --ao=null"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        # The queue is whole once the second clip is added.
        deadline = time.time() + 30
        while time.time() < deadline and '"queue add' not in host.stdout.readline():
            pass
        connection = socket.socket(socket.AF_UNIX)
        connection.connect(ipc)
        stream = connection.makefile("rw")
        request = [0]

        def get(name):
            request[0] += 1
            stream.write(json.dumps({"command": ["get_property", name], "request_id": request[0]}) + "\n")
            stream.flush()
            while True:
                reply = json.loads(stream.readline())
                if reply.get("request_id") == request[0]:
                    return reply.get("data")

        host.stdin.write("play\n")
        host.stdin.flush()
        furthest = 0.0
        deadline = time.time() + 15
        while time.time() < deadline:
            name = get("filename")
            if name == FIRST:
                position = get("time-pos")
                if isinstance(position, (int, float)):
                    furthest = max(furthest, position)
            elif furthest > 0:
                break
            time.sleep(0.005)
        print(f"run {run + 1}: mpv showed {FIRST} to {furthest:.2f} s of 4.00", flush=True)
        host.stdin.write("end\n")
        host.stdin.flush()
        host.wait(20)
    finally:
        if host.poll() is None:
            host.kill()


for run in range(RUNS):
    run_once(run)
