import subprocess
subprocess.run(["git", "status"], check=True)
subprocess.Popen(
    ["python3", "worker.py"],
    stdout=subprocess.PIPE,
)
