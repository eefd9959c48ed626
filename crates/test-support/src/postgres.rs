//! A real PostgreSQL server for the stores' PostgreSQL tests (Debian's
//! `postgresql`; `cargo xtask test` installs it).
//!
//! [`PgServer::start`] initialises a private cluster under
//! `target/talon-pg/` (as the `postgres` OS user when the tests run as
//! root, since PostgreSQL refuses to run as root) with a random password
//! for the superuser `talon` (SCRAM), and starts it on a free loopback
//! port without a Unix socket. It is stopped and deleted on drop;
//! [`PgServer::stop`] and [`PgServer::start_again`] are for fault tests.
//!
//! [`shared_database`] gives each test a fresh database: on the server
//! `cargo xtask test` started for the whole run (`TALON_TEST_PG_URL` and
//! `TALON_TEST_PG_PASSWORD`), or, outside it, on a private server that
//! lives as long as the returned [`TestDb`]. A missing PostgreSQL is an
//! error naming `cargo xtask postgres-install`, never a skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context as _, Result, bail};
use talon_state::PgConfig;

/// The environment variable holding the shared test server's URL.
pub const URL_ENV: &str = "TALON_TEST_PG_URL";
/// The environment variable holding the shared test server's password.
pub const PASSWORD_ENV: &str = "TALON_TEST_PG_PASSWORD";
/// The superuser the clusters are initialised with.
pub const USER: &str = "talon";

/// Where Debian installs PostgreSQL's server programs.
const PG_LIB: &str = "/usr/lib/postgresql";

/// The directory of the newest installed PostgreSQL's programs.
pub fn bin_dir() -> Result<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(PG_LIB)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    match versions.pop() {
        Some((_, bin)) => Ok(bin),
        None => bail!(
            "PostgreSQL's server programs are missing under {PG_LIB}: run `cargo xtask postgres-install` (installs Debian's postgresql) and run the tests again"
        ),
    }
}

/// A running private PostgreSQL cluster; stopped and deleted on drop.
#[derive(Debug)]
pub struct PgServer {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    password: String,
    as_postgres: bool,
    running: bool,
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// The uid and gid of the `postgres` OS user.
fn postgres_ids() -> Result<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").context("cannot read /etc/passwd")?;
    for line in passwd.lines() {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() > 3 && f[0] == "postgres" {
            return Ok((f[2].parse()?, f[3].parse()?));
        }
    }
    bail!(
        "there is no `postgres` OS user to run the test server as: run `cargo xtask postgres-install`"
    )
}

/// `target/talon-pg`, next to the test binary's `debug` directory.
fn clusters_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the test binary")?;
    let target = exe
        .ancestors()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n == "debug" || n == "release")
        })
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir);
    Ok(target.join("talon-pg"))
}

fn random_hex(bytes: usize) -> String {
    // Unique enough for a test password and names; not a secret of value.
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
        ^ (u128::from(std::process::id()) << 64)
        ^ u128::from(COUNTER.fetch_add(1, Ordering::Relaxed)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let out = format!("{seed:032x}");
    // The low digits change fastest (nanoseconds, the counter).
    out[out.len().saturating_sub(bytes * 2)..].to_owned()
}

fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(l.local_addr()?.port())
}

impl PgServer {
    /// Initialise and start a private cluster.
    pub fn start() -> Result<PgServer> {
        let bin = bin_dir()?;
        let root = clusters_dir()?;
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create {}", root.display()))?;
        let dir = root.join(format!("c{}-{}", std::process::id(), random_hex(4)));
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let as_postgres = is_root();
        if as_postgres {
            let (uid, gid) = postgres_ids()?;
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                .with_context(|| format!("cannot hand {} to the postgres user", dir.display()))?;
        }
        let mut server = PgServer {
            dir,
            bin,
            port: 0,
            password: random_hex(12),
            as_postgres,
            running: false,
        };
        let pwfile = server.dir.join("pwfile");
        std::fs::write(&pwfile, format!("{}\n", server.password))
            .context("cannot write the password file")?;
        if as_postgres {
            let (uid, gid) = postgres_ids()?;
            std::os::unix::fs::chown(&pwfile, Some(uid), Some(gid))?;
        }
        let data = server.dir.join("data");
        let mut initdb = server.command("initdb");
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", USER, "-A", "scram-sha-256", "-E", "UTF8", "--no-sync"])
            .arg(format!("--pwfile={}", pwfile.display()));
        run(&mut initdb)?;
        let _ = std::fs::remove_file(&pwfile);
        let mut last = None;
        for _ in 0..5 {
            server.port = free_port()?;
            match server.start_again() {
                Ok(()) => return Ok(server),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| anyhow::anyhow!("the server did not start")))
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        };
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Start it (again) on its port, after [`PgServer::stop`].
    pub fn start_again(&mut self) -> Result<()> {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off \
             -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
            self.port
        );
        let mut cmd = self.command("pg_ctl");
        cmd.arg("-D")
            .arg(self.dir.join("data"))
            .args(["-o", &options, "-l"])
            .arg(self.dir.join("server.log"))
            .args(["-w", "-t", "30", "start"]);
        run(&mut cmd).with_context(|| format!("server log:\n{}", self.log()))?;
        self.running = true;
        Ok(())
    }

    /// Stop it at once (`immediate`: like a crash, connections cut).
    pub fn stop(&mut self) -> Result<()> {
        let mut cmd = self.command("pg_ctl");
        cmd.arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "immediate", "-w", "stop"]);
        run(&mut cmd)?;
        self.running = false;
        Ok(())
    }

    /// Its loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The superuser's password.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The URL of database `db` (no password in it).
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// A config for database `db`, with the password.
    pub fn config(&self, db: &str) -> PgConfig {
        PgConfig::new(self.url(db)).with_password(self.password.clone())
    }

    /// What the server logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// Create a fresh database and return its name.
    pub fn create_database(&self) -> Result<String> {
        create_database(&self.url("postgres"), &self.password)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if self.running {
            let _ = self.stop();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(cmd: &mut Command) -> Result<()> {
    let out = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// Create a fresh database through the server at `admin_url` and return
/// its name. Runs the client on a thread of its own, so it is safe to call
/// from inside a tokio runtime.
fn create_database(admin_url: &str, password: &str) -> Result<String> {
    let name = format!("t_{}", random_hex(16));
    let (url, password, db) = (admin_url.to_owned(), password.to_owned(), name.clone());
    std::thread::spawn(move || -> Result<()> {
        let mut config: talon_state::postgres::Config = url.parse()?;
        config.password(password);
        let mut client = config.connect(talon_state::postgres::NoTls)?;
        client.batch_execute(&format!("CREATE DATABASE {db}"))?;
        Ok(())
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the create-database thread panicked"))??;
    Ok(name)
}

/// A fresh database for one test; the private server behind it (outside
/// `cargo xtask test`) lives as long as this.
#[derive(Debug)]
pub struct TestDb {
    config: PgConfig,
    name: String,
    _server: Option<PgServer>,
}

impl TestDb {
    /// Its connection config (with the password).
    pub fn config(&self) -> PgConfig {
        self.config.clone()
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A pool on it.
    pub fn pool(&self) -> Result<talon_state::PgPool> {
        talon_state::PgPool::connect(self.config()).context("cannot connect to the test database")
    }
}

/// A fresh database: on the run's shared server when `cargo xtask test`
/// started one, else on a private server owned by the result.
pub fn shared_database() -> Result<TestDb> {
    if let (Ok(url), Ok(password)) = (std::env::var(URL_ENV), std::env::var(PASSWORD_ENV)) {
        let name = create_database(&url, &password).with_context(|| {
            format!("cannot create a database on the shared test server ({URL_ENV})")
        })?;
        let base = url.rsplit_once('/').map_or(url.as_str(), |(b, _)| b);
        return Ok(TestDb {
            config: PgConfig::new(format!("{base}/{name}")).with_password(password),
            name,
            _server: None,
        });
    }
    let server = PgServer::start()?;
    let name = server.create_database()?;
    Ok(TestDb {
        config: server.config(&name),
        name,
        _server: Some(server),
    })
}
