//! The bucket's settings (`evidencias.s3_*`), as the app hands them over.

/// Where the bucket is and how to sign for it. `Debug` never shows the secret.
#[derive(Clone)]
pub struct S3Settings {
    /// `https://...`, or `http://127.0.0.1:<port>` for a test's bucket.
    pub endpoint: String,
    pub bucket: String,
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: String,
}

impl S3Settings {
    /// Plain HTTP only to this host (the app's settings check refuses it elsewhere).
    pub fn allow_http(&self) -> bool {
        self.endpoint.starts_with("http://")
    }
}

impl std::fmt::Debug for S3Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Settings")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<hidden>")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_secret() {
        let s = S3Settings {
            endpoint: "https://s3.example".into(),
            bucket: "b".into(),
            region: "r".into(),
            access_key_id: "AKIA".into(),
            secret_access_key: "very-secret-value".into(),
        };
        let shown = format!("{s:?}");
        assert!(!shown.contains("very-secret-value"), "{shown}");
        assert!(shown.contains("<hidden>"));
    }
}
