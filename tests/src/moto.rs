//! moto's server mode (PyPI `moto[server]`): an S3-compatible endpoint on a free 127.0.0.1 port
//! for the evidence files kept in a bucket (tests/tests/api/evidence_files_s3.rs). `.ci/run`
//! installs it, pinned, into a virtualenv under target/ and exports `MOTO_SERVER`. The test reads
//! the bucket through moto's own S3 API (boto3, from the same virtualenv), never through the
//! service. Started under `timeout`, so a test killed outright leaves no server behind for
//! more than its bound; `Drop` stops it by its pid.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::processes::{log_dir, repo_root};

/// The pinned version `.ci/run` installs.
pub const MOTO_VERSION: &str = "5.2.6";

/// How `moto_server` is installed where the test looks for it.
pub fn install_command() -> String {
    format!(
        "python3 -m venv target/moto-{MOTO_VERSION} && target/moto-{MOTO_VERSION}/bin/pip install 'moto[server]=={MOTO_VERSION}' (.ci/run does it)"
    )
}

/// `MOTO_SERVER`, else the virtualenv `.ci/run` makes, else `moto_server` on the PATH. A test
/// that needs moto fails without it, naming the install: a bucket test that silently passed
/// would prove nothing.
fn moto_server() -> PathBuf {
    if let Some(path) = std::env::var_os("MOTO_SERVER") {
        return PathBuf::from(path);
    }
    let venv = repo_root()
        .join("target")
        .join(format!("moto-{MOTO_VERSION}"))
        .join("bin")
        .join("moto_server");
    if venv.exists() {
        return venv;
    }
    let on_path = Command::new("sh")
        .args(["-c", "command -v moto_server"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    on_path.unwrap_or_else(|| {
        panic!(
            "moto_server not found: install it with {}",
            install_command()
        )
    })
}

pub struct Moto {
    child: Child,
    /// `http://127.0.0.1:<port>`: the S3 endpoint.
    pub endpoint: String,
    /// Its log (stdout and stderr).
    pub log: PathBuf,
    /// The virtualenv's Python (with boto3, which moto depends on).
    python: PathBuf,
}

impl Moto {
    /// Starts moto on a free 127.0.0.1 port and returns once it answers.
    pub fn start() -> Moto {
        let server = moto_server();
        let port = free_port();
        let tag = &uuid::Uuid::new_v4().simple().to_string()[..12];
        let log = log_dir().join(format!("moto-{tag}.log"));
        let log_file = std::fs::File::create(&log).expect("create the moto log");
        // at most 15 minutes, whatever happens to the test
        let child = Command::new("timeout")
            .arg("900")
            .arg(&server)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::from(log_file.try_clone().expect("log")))
            .stderr(Stdio::from(log_file))
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "could not start {} ({e}): install it with {}",
                    server.display(),
                    install_command()
                )
            });
        let python = server
            .parent()
            .map(|bin| bin.join("python"))
            .filter(|p| p.exists())
            .unwrap_or_else(|| PathBuf::from("python3"));
        let mut moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            log,
            python,
        };
        moto.wait_listening(port);
        moto
    }

    fn wait_listening(&mut self, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "moto_server exited ({status}); its log:\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "moto_server never listened; its log:\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }

    /// Creates `bucket` through moto's S3 API.
    pub fn create_bucket(&self, bucket: &str) {
        self.boto3(bucket, "s3.create_bucket(Bucket=bucket)");
    }

    /// The object's bytes, or `None` when there is none at `key`.
    pub fn object(&self, bucket: &str, key: &str) -> Option<Vec<u8>> {
        let out = self.boto3_output(
            bucket,
            &format!(
                "try:\n    sys.stdout.buffer.write(s3.get_object(Bucket=bucket, Key={key:?})['Body'].read())\nexcept s3.exceptions.NoSuchKey:\n    sys.exit(3)"
            ),
        );
        match out.status.code() {
            Some(0) => Some(out.stdout),
            Some(3) => None,
            _ => panic!(
                "reading {key} from moto failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }

    /// Every key of the bucket (ListObjectsV2), in order.
    pub fn keys(&self, bucket: &str) -> Vec<String> {
        self.lines(
            bucket,
            "for o in s3.list_objects_v2(Bucket=bucket).get('Contents', []):\n    print(o['Key'])",
        )
    }

    /// The keys of the multipart uploads under way in the bucket (ListMultipartUploads).
    pub fn multipart_uploads(&self, bucket: &str) -> Vec<String> {
        self.lines(
            bucket,
            "for u in s3.list_multipart_uploads(Bucket=bucket).get('Uploads', []):\n    print(u['Key'])",
        )
    }

    fn lines(&self, bucket: &str, code: &str) -> Vec<String> {
        String::from_utf8(self.boto3(bucket, code))
            .expect("keys are UTF-8")
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn boto3(&self, bucket: &str, code: &str) -> Vec<u8> {
        let out = self.boto3_output(bucket, code);
        assert!(
            out.status.success(),
            "boto3 against moto failed ({code}): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// Runs `code` with `s3` a boto3 client of moto (signed: moto refuses anonymous reads of
    /// objects) and `bucket` set. boto3 comes with moto, in its virtualenv.
    fn boto3_output(&self, bucket: &str, code: &str) -> std::process::Output {
        let script = format!(
            "import sys, boto3\n\
             s3 = boto3.client('s3', endpoint_url={endpoint:?}, region_name='us-east-1', \
             aws_access_key_id='testing', aws_secret_access_key='testing')\n\
             bucket = {bucket:?}\n{code}\n",
            endpoint = self.endpoint
        );
        Command::new(&self.python)
            .args(["-c", &script])
            .stdin(Stdio::null())
            .output()
            .expect("run the virtualenv's python")
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        // by its pid: TERM to `timeout`, which passes it on to moto_server and exits with it
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}
