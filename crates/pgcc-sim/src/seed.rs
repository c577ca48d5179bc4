//! The seed: which companies the simulated PGCC knows, their links (vínculos) and the use-case
//! templates of each link.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The whole seed file: `{"empresas":[...]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seed {
    #[serde(default)]
    pub empresas: Vec<SeedEmpresa>,
}

/// A company, by CNPJ (masked or not: compared after [`normalize_cnpj`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedEmpresa {
    pub cnpj: String,
    #[serde(default)]
    pub vinculos: Vec<SeedVinculo>,
}

/// A link (vínculo) of a company, holding use-case templates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedVinculo {
    pub id: Uuid,
    #[serde(default)]
    pub casos_de_uso: Vec<SeedCasoDeUso>,
}

/// A use-case template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedCasoDeUso {
    pub template_id: String,
    pub titulo: String,
}

impl Seed {
    /// The company with this CNPJ, masked or not.
    pub fn empresa(&self, cnpj: &str) -> Option<&SeedEmpresa> {
        let wanted = normalize_cnpj(cnpj);
        self.empresas
            .iter()
            .find(|e| normalize_cnpj(&e.cnpj) == wanted)
    }
}

impl SeedEmpresa {
    /// The link holding `template_id`; when `vinculo_id` is given, only that link is searched.
    pub fn vinculo_with_template(
        &self,
        template_id: &str,
        vinculo_id: Option<Uuid>,
    ) -> Option<&SeedVinculo> {
        self.vinculos
            .iter()
            .filter(|v| vinculo_id.is_none_or(|id| v.id == id))
            .find(|v| v.casos_de_uso.iter().any(|c| c.template_id == template_id))
    }
}

/// A CNPJ without its mask (`.`, `/`, `-`), upper-cased: `11.222.333/0001-81` -> `11222333000181`.
pub fn normalize_cnpj(raw: &str) -> String {
    raw.trim()
        .chars()
        .filter(|c| !matches!(c, '.' | '/' | '-'))
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Reads a seed file (JSON).
pub fn load_seed(path: impl AsRef<Path>) -> anyhow::Result<Seed> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the seed file {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing the seed file {}", path.display()))
}
