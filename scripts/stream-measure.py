#!/usr/bin/env python3
"""Streaming's figures on loopback (issue 15 item 4), with real processes through a real relay.

    scripts/stream-measure.py TANDEM FILM PLAY_S SEEK_TO AFTER_S

A host plays FILM; after 1 s a joiner without the file joins (it streams FILM); PLAY_S later the
host seeks to SEEK_TO s; AFTER_S later it ends. Prints: the joiner's `joined` (its own instant)
to its first moving frame, the seek command to the first frame at SEEK_TO on the joiner and on
the host (its own file, for comparison), and the joiner's resident memory (VmRSS, sampled every
250 ms). Make 1080p films with ffmpeg -f lavfi (testsrc2) in a temporary folder.
"""
import json, os, subprocess, sys, tempfile, threading, time
BIN, film = sys.argv[1], sys.argv[2]
play_s, seek_to, after_s = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
d = tempfile.mkdtemp(prefix="tandem-stream-measure-")
def mono(): return time.clock_gettime_ns(time.CLOCK_MONOTONIC)
def start(args, env=None):
    e = dict(os.environ); e.update(env or {})
    p = subprocess.Popen([BIN] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, text=True, bufsize=1)
    p.lines = []
    def rd():
        for line in p.stdout: p.lines.append((mono(), line.strip()))
    threading.Thread(target=rd, daemon=True).start()
    return p
def wait(p, pred, t=30):
    end = time.time() + t
    while time.time() < end:
        for _, l in list(p.lines):
            if pred(l): return l
        time.sleep(0.02)
    raise SystemExit("timeout: %s" % p.lines[-5:])
for f in ["ana.jsonl", "ben.jsonl"]:
    try: os.remove(os.path.join(d, f))
    except FileNotFoundError: pass
host = start(["host", film, "--bind", "127.0.0.1", "--port", "0", "--events", "json", "--name", "ana", "--presentation-log", d + "/ana.jsonl"])
invite = wait(host, lambda l: l.startswith("tandem://"))
wait(host, lambda l: '"joined"' in l)
host.stdin.write("play\n"); host.stdin.flush()
time.sleep(1)
ben = start(["join", "--events", "json", "--name", "ben", "--presentation-log", d + "/ben.jsonl"], {"TANDEM_INVITE": invite})
rss = []
def sample():
    while ben.poll() is None:
        try:
            for line in open("/proc/%d/status" % ben.pid):
                if line.startswith("VmRSS"): rss.append(int(line.split()[1]) / 1024)
        except Exception: pass
        time.sleep(0.25)
threading.Thread(target=sample, daemon=True).start()
joined = json.loads(wait(ben, lambda l: '"joined"' in l))
time.sleep(play_s)
seek_sent = mono()
host.stdin.write("seek %g\n" % seek_to); host.stdin.flush()
time.sleep(after_s)
host.stdin.write("end\n"); host.stdin.flush()
host.wait(20); ben.wait(20)
recs = [json.loads(l) for l in open(d + "/ben.jsonl") if l.strip()]
moving = [r for r in recs if not r.get("still")]
first = moving[0]["presented_ns"]
after = [r for r in moving if r["presented_ns"] > seek_sent and seek_to <= r["pts"] < seek_to + 1]
hrecs = [json.loads(l) for l in open(d + "/ana.jsonl") if l.strip()]
hafter = [r for r in hrecs if not r.get("still") and r["presented_ns"] > seek_sent and seek_to <= r["pts"] < seek_to + 1]
print("host (own file): seek ->first frame there %.1f ms" % ((hafter[0]["presented_ns"] - seek_sent) / 1e6 if hafter else float("nan")))
stats = [json.loads(l) for _, l in ben.lines if '"statistics"' in l]
print("file %s: joined->first frame %.1f ms; seek to %gs ->first frame there %.1f ms; joiner RSS max %.1f MiB (p50 %.1f, %d samples); %s" % (
    os.path.basename(film), (first - joined["monotonic_ns"]) / 1e6, seek_to,
    (after[0]["presented_ns"] - seek_sent) / 1e6 if after else float("nan"), max(rss), sorted(rss)[len(rss)//2], len(rss), stats))
