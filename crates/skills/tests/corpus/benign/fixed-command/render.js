const { execSync } = require("child_process");
const fs = require("fs");
const svg = execSync("dot -Tsvg", { input: fs.readFileSync(process.argv[2], "utf8") });
fs.writeFileSync("out.svg", svg);
