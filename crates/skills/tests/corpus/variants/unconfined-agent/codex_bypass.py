import subprocess
subprocess.run(['codex', '--dangerously-bypass-approvals-and-sandbox', 'exec', task])
