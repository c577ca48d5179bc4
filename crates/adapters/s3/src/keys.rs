//! Where an object sits in the bucket. A file is content-addressed **within its company**: its
//! key is the company's id and the SHA-256 of its bytes, both from the service (the company of the
//! caller's key, a hash the upload computed), never from the client's path alone, so no company
//! can form a key under another's prefix. An upload under way, whose hash is not known yet, sits
//! apart under [`UPLOADS_PREFIX`] until its bytes are checked.

use domain::CompanyId;
use object_store::path::Path;
use uuid::Uuid;

/// The uploads under way (and those a crash left): `envios/<company>/<upload id>`.
pub const UPLOADS_PREFIX: &str = "envios";

/// The company's file of that SHA-256 (lower-case hex): `<company>/<sha256>`.
pub fn file_key(company: CompanyId, sha256: &str) -> Path {
    Path::from(format!("{}/{sha256}", company.0))
}

/// An upload under way: `envios/<company>/<upload id>`.
pub fn upload_key(company: CompanyId, object: Uuid) -> Path {
    Path::from(format!("{UPLOADS_PREFIX}/{}/{object}", company.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_sits_under_its_company_and_an_upload_apart() {
        let company = CompanyId(Uuid::from_u128(1));
        let hash = "ab".repeat(32);
        assert_eq!(
            file_key(company, &hash).as_ref(),
            format!("00000000-0000-0000-0000-000000000001/{hash}")
        );
        assert_eq!(
            upload_key(company, Uuid::from_u128(2)).as_ref(),
            "envios/00000000-0000-0000-0000-000000000001/00000000-0000-0000-0000-000000000002"
        );
    }
}
