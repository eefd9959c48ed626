const cp = require("child_process");
cp.execSync("make clean");
