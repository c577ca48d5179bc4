//! A simulator running on its own thread and actix System, for synchronous tests.

use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc;
use std::thread::JoinHandle;

use actix_web::dev::ServerHandle;

use crate::seed::Seed;

/// A running simulator; stopped (connections dropped) when this value is dropped.
pub struct SpawnedSim {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub base_url: String,
    pub addr: SocketAddr,
    handle: ServerHandle,
    thread: Option<JoinHandle<()>>,
}

impl SpawnedSim {
    /// `base_url` + `path` (`path` starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }
}

impl Drop for SpawnedSim {
    fn drop(&mut self) {
        // `stop` sends the command at once; the returned future only waits for completion.
        drop(self.handle.stop(false));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts a simulator on 127.0.0.1 (a free port) without a token. Panics if it cannot start.
pub fn spawn_in_background(seed: Seed) -> SpawnedSim {
    spawn_in_background_with_token(seed, None)
}

/// Like [`spawn_in_background`], with the contract routes requiring `Bearer <token>` when given.
pub fn spawn_in_background_with_token(seed: Seed, token: Option<String>) -> SpawnedSim {
    let listener = TcpListener::bind("127.0.0.1:0").expect("pgcc-sim: binding 127.0.0.1:0");
    let addr = listener.local_addr().expect("pgcc-sim: local address");
    let (tx, rx) = mpsc::channel::<std::io::Result<ServerHandle>>();
    let thread = std::thread::Builder::new()
        .name(format!("pgcc-sim-{}", addr.port()))
        .spawn(move || {
            let system = actix_web::rt::System::new();
            let result = system.block_on(async move {
                let server = match crate::serve(listener, seed, token) {
                    Ok(server) => server,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return Ok(());
                    }
                };
                let _ = tx.send(Ok(server.handle()));
                server.await
            });
            if let Err(e) = result {
                eprintln!("pgcc-sim stopped with an error: {e}");
            }
        })
        .expect("pgcc-sim: spawning its thread");
    let handle = match rx.recv() {
        Ok(Ok(handle)) => handle,
        Ok(Err(e)) => panic!("pgcc-sim: could not start: {e}"),
        Err(_) => panic!("pgcc-sim: its thread ended before starting"),
    };
    SpawnedSim {
        base_url: format!("http://{addr}"),
        addr,
        handle,
        thread: Some(thread),
    }
}
