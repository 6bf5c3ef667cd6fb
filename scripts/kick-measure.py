#!/usr/bin/env python3
"""The group's spread around a removal, with real processes on the relay `tandem host` starts.

    scripts/kick-measure.py TANDEM [CLIP]

Ana hosts CLIP (default: the sample clip), Ben and Cy join; 4 s later Ana plays; 11 s later she
removes Ben (`kick ben`); 11 s later she ends the party. Each participant writes a presentation
log (presented instants on the raw CLOCK_MONOTONIC all processes share). Prints each process's
exit status (a removed one exits 3) and, for the frames Ana and Cy both presented, the spread of
their presentation instants (max - min) in the 10 s before the kick and the 10 s after it. The
10 s before begin about 1 s after the play, so they include the start's first frames.
"""
import json, os, re, subprocess, sys, tempfile, time

TANDEM = sys.argv[1]
CLIP = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "Samples", "Media", "watch-together.mp4")
directory = tempfile.mkdtemp(prefix="tandem-kick-measure-")
runtime = os.path.join(directory, "run")
os.makedirs(runtime, mode=0o700)
environment = dict(os.environ, XDG_RUNTIME_DIR=runtime)
quiet = ["--audio", "none", "--video", "none", "--json"]


def log(name):
    return os.path.join(directory, name + ".jsonl")


host = subprocess.Popen([TANDEM, "host", CLIP, "--bind", "127.0.0.1", "--port", "0", "--relay-linger", "1", "--name", "ana",
                         "--presentation-log", log("ana")] + quiet,
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment, text=True)
invite = None
deadline = time.time() + 30
while invite is None and time.time() < deadline:
    match = re.search(r"(tandem://[^\"\s]+)", host.stdout.readline())
    invite = match.group(1) if match else None
if invite is None:
    host.kill()
    sys.exit("the host printed no invite")
joiners = {name: subprocess.Popen([TANDEM, "join", CLIP, "--name", name, "--presentation-log", log(name)] + quiet,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=dict(environment, TANDEM_INVITE=invite))
           for name in ("ben", "cy")}
time.sleep(4)
host.stdin.write("play\n")
host.stdin.flush()
time.sleep(11)
kick = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
host.stdin.write("kick ben\n")
host.stdin.flush()
time.sleep(11)
host.stdin.write("end\n")
host.stdin.flush()
for process in [host] + list(joiners.values()):
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
print("exit statuses: ana %s, ben %s, cy %s" % (host.returncode, joiners["ben"].returncode, joiners["cy"].returncode))


def presented(name):
    frames = {}
    for line in open(log(name)):
        record = json.loads(line)
        if not record.get("still") and not record.get("reading"):
            frames.setdefault((record["item"], round(record["pts"], 4)), record["presented_ns"])
    return frames


def percentile(values, fraction):
    values = sorted(values)
    return values[min(len(values) - 1, int(fraction * len(values)))]


ana, cy = presented("ana"), presented("cy")
for label, low, high in (("10 s before the kick", kick - 10_000_000_000, kick), ("10 s after the kick", kick, kick + 10_000_000_000)):
    spreads = [abs(ana[key] - cy[key]) / 1e6 for key in ana.keys() & cy.keys() if low <= min(ana[key], cy[key]) < high]
    if spreads:
        print("%s: %d frames, spread p50 %.3f ms, p99 %.3f ms, max %.3f ms"
              % (label, len(spreads), percentile(spreads, 0.5), percentile(spreads, 0.99), max(spreads)))
    else:
        print("%s: no frame both presented" % label)
