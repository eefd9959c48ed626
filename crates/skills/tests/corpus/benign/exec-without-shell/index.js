const { execFileSync, spawn } = require("child_process");
const out = execFileSync("git", ["status", "--short"]);
const child = spawn("node", ["worker.js"], {
  stdio: "inherit",
  shell: false,
});
