//! A small HTTP client for tests: never turns a status into an error, so every test asserts the
//! status it expects.

use std::time::Duration;

use serde_json::Value;

pub struct Client {
    agent: ureq::Agent,
    base_url: String,
    key: Option<String>,
}

/// What came back: status, the headers tests look at, and the body (JSON when it parses).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub allow: Option<String>,
    pub retry_after: Option<String>,
    /// Every response header (lower-case names), for the rarer ones: see [`Reply::header`].
    pub headers: Vec<(String, String)>,
    pub text: String,
    pub json: Value,
    /// The body as sent (a binary answer, e.g. an export's gzip, is not `text`).
    pub body: Vec<u8>,
}

impl Reply {
    /// Asserts the status and that the body is the envelope with exactly its five fields.
    pub fn expect(self, status: u16) -> Reply {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.text
        );
        let obj = self
            .json
            .as_object()
            .unwrap_or_else(|| panic!("body is not a JSON object: {}", self.text));
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "data",
                "isPgccErro",
                "mensagem",
                "pgccCodigoErro",
                "sucesso"
            ],
            "not the envelope: {}",
            self.text
        );
        assert_eq!(
            obj["sucesso"],
            Value::Bool((200..300).contains(&status)),
            "sucesso vs status: {}",
            self.text
        );
        self
    }

    pub fn data(&self) -> &Value {
        &self.json["data"]
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl Client {
    pub fn new(base_url: &str, key: Option<&str>) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            // Never reuse a connection idle for longer than the server keeps one (actix: 5 s):
            // a request sent as the server closes it fails at the transport level ("Peer
            // disconnected"), seen once under load.
            .max_idle_age(Duration::from_secs(2))
            .build()
            .new_agent();
        Client {
            agent,
            base_url: base_url.trim_end_matches('/').to_owned(),
            key: key.map(str::to_owned),
        }
    }

    pub fn with_key(&self, key: Option<&str>) -> Client {
        Client::new(&self.base_url, key)
    }

    pub fn get(&self, path: &str) -> Reply {
        self.get_accept(path, None)
    }

    pub fn get_accept(&self, path: &str, accept: Option<&str>) -> Reply {
        let mut req = self.agent.get(format!("{}{path}", self.base_url));
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        if let Some(a) = accept {
            req = req.header("Accept", a);
        }
        read(req.call())
    }

    /// GET with extra headers (e.g. `Authorization`, `X-Request-Id`).
    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut req = self.agent.get(format!("{}{path}", self.base_url));
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        read(req.call())
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Reply {
        self.post_raw(path, "application/json", &serde_json::to_vec(body).unwrap())
    }

    /// `post_json` with extra request headers (e.g. `Idempotency-Key`).
    pub fn post_json_with(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> Reply {
        let mut req = self
            .agent
            .post(format!("{}{path}", self.base_url))
            .header("Content-Type", "application/json");
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        read(req.send(&serde_json::to_vec(body).unwrap()[..]))
    }

    pub fn post_raw(&self, path: &str, content_type: &str, body: &[u8]) -> Reply {
        let mut req = self
            .agent
            .post(format!("{}{path}", self.base_url))
            .header("Content-Type", content_type);
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        read(req.send(body))
    }

    /// POST with extra headers (e.g. `Content-Encoding`).
    pub fn post_raw_with(
        &self,
        path: &str,
        content_type: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Reply {
        let mut req = self
            .agent
            .post(format!("{}{path}", self.base_url))
            .header("Content-Type", content_type);
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        read(req.send(body))
    }

    pub fn post_empty(&self, path: &str) -> Reply {
        let mut req = self.agent.post(format!("{}{path}", self.base_url));
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        read(req.send_empty())
    }

    pub fn delete(&self, path: &str) -> Reply {
        let mut req = self.agent.delete(format!("{}{path}", self.base_url));
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        read(req.call())
    }

    /// PATCH with a JSON body (`application/json`).
    pub fn patch_json(&self, path: &str, body: &Value) -> Reply {
        self.patch_raw(path, "application/json", &serde_json::to_vec(body).unwrap())
    }

    pub fn patch_raw(&self, path: &str, content_type: &str, body: &[u8]) -> Reply {
        let mut req = self
            .agent
            .patch(format!("{}{path}", self.base_url))
            .header("Content-Type", content_type);
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        read(req.send(body))
    }

    /// PUT with a raw body of `content_type` (an evidence file's bytes).
    pub fn put_raw(&self, path: &str, content_type: &str, body: &[u8]) -> Reply {
        let mut req = self
            .agent
            .put(format!("{}{path}", self.base_url))
            .header("Content-Type", content_type);
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        read(req.send(body))
    }

    pub fn put_json(&self, path: &str, body: &Value) -> Reply {
        let mut req = self
            .agent
            .put(format!("{}{path}", self.base_url))
            .header("Content-Type", "application/json");
        if let Some(k) = &self.key {
            req = req.header("Api-Key", k);
        }
        read(req.send(&serde_json::to_vec(body).unwrap()[..]))
    }
}

fn read(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Reply {
    let mut res = result.expect("HTTP request failed at the transport level");
    let header = |name: &str| {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let status = res.status().as_u16();
    let content_type = header("content-type").unwrap_or_default();
    let allow = header("allow");
    let retry_after = header("retry-after");
    let headers = res
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    // 204 and 304 have no body by definition; reading one would wait for the connection to
    // close (the server's keep-alive timeout)
    let body = if matches!(status, 204 | 304) {
        Vec::new()
    } else {
        res.body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_vec()
            .unwrap_or_default()
    };
    let text = String::from_utf8(body.clone()).unwrap_or_default();
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    Reply {
        status,
        content_type,
        allow,
        retry_after,
        headers,
        text,
        json,
        body,
    }
}
