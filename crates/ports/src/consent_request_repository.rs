use domain::ConsentRequest;

use crate::RepoError;

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ConsentRequestRepository: Send + Sync {
    /// Stores a consent request created on the PGCC.
    fn insert(&self, request: &ConsentRequest) -> Result<(), RepoError>;
}
