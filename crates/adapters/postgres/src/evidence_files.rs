//! [`PgEvidenceFiles`]: the evidence files' rows (`evidencias_arquivos`), their links to the
//! consent requests (`solicitacoes_arquivos`, through the owner's `evidencia_vincular`, which
//! appends the log entry) and, as the default [`EvidenceStore`], their bytes in parts
//! (`evidencias_partes`). Every statement names the company (docs/evidencias.md).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bytea, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, EvidenceFile, EvidenceLink};
use ports::{
    EvidenceFileRepository, EvidenceStore, ExpiredObject, LocatedFile, RepoError, StorageKind,
    StoredFile, EVIDENCE_PART_BYTES,
};
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::fixed_sql::statement;
use crate::per_company::{companies_with, share_among, CompanyIdRow};
use crate::settled;
use crate::PgPool;

/// The files of the companies and their bytes in PostgreSQL.
#[derive(Clone)]
pub struct PgEvidenceFiles {
    pool: PgPool,
}

impl PgEvidenceFiles {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

statement! {
    /// A new file of the company; nothing when it has one of that hash already, unless
    /// retention deleted that one's bytes: then the row takes these (docs/evidencias.md,
    /// "Retention": uploading the same bytes again stores them anew), its links and their log
    /// entries unchanged.
    struct InsertFile<'a> {
        empresa: Uuid as SqlUuid,
        sha256: &'a str as Text,
        tamanho: i64 as BigInt,
        tipo: &'a str as Text,
        armazenamento: &'a str as Text,
        objeto: Uuid as SqlUuid,
        criado_em: DateTime<Utc> as Timestamptz,
    }
    "INSERT INTO evidencias_arquivos
    (empresa_id, sha256, tamanho, tipo, armazenamento, objeto_id, criado_em)
VALUES ($empresa, $sha256, $tamanho, $tipo, $armazenamento, $objeto, $criado_em)
ON CONFLICT (empresa_id, sha256) DO UPDATE SET
    armazenamento = EXCLUDED.armazenamento, objeto_id = EXCLUDED.objeto_id,
    criado_em = EXCLUDED.criado_em, bytes_apagados_em = NULL
WHERE evidencias_arquivos.bytes_apagados_em IS NOT NULL
RETURNING sha256, tamanho, tipo, criado_em, bytes_apagados_em, objeto_id"
}

statement! {
    /// The company's file of that hash.
    struct FindFile<'a> {
        empresa: Uuid as SqlUuid,
        sha256: &'a str as Text,
    }
    "SELECT sha256, tamanho, tipo, criado_em, bytes_apagados_em, objeto_id
FROM evidencias_arquivos WHERE empresa_id = $empresa AND sha256 = $sha256"
}

statement! {
    /// The files linked to one of the company's requests, oldest link first.
    struct LinkedFiles {
        empresa: Uuid as SqlUuid,
        solicitacao: Uuid as SqlUuid,
    }
    "SELECT a.sha256, a.tamanho, a.tipo, a.criado_em, a.bytes_apagados_em, a.objeto_id
FROM solicitacoes_arquivos l
JOIN evidencias_arquivos a ON a.empresa_id = l.empresa_id AND a.sha256 = l.sha256
WHERE l.empresa_id = $empresa AND l.solicitacao_id = $solicitacao
ORDER BY l.vinculado_em, l.sha256"
}

statement! {
    /// The link and its log entry, by the owner's function.
    struct Link<'a> {
        empresa: Uuid as SqlUuid,
        solicitacao: Uuid as SqlUuid,
        sha256: &'a str as Text,
        em: DateTime<Utc> as Timestamptz,
        transacao: i64 as BigInt,
    }
    "SELECT evidencia_vincular($empresa, $solicitacao, $sha256, $em, $transacao) AS resultado"
}

/// A file whose bytes retention may delete: stored before `$antes`, its bytes still there, and no
/// request linking it open or changed since `$antes`. `f` is the file.
macro_rules! expirable {
    () => {
        "f.bytes_apagados_em IS NULL AND f.criado_em < $antes
      AND NOT EXISTS (
        SELECT 1 FROM solicitacoes_arquivos l
        JOIN solicitacoes_consentimento s ON s.empresa_id = l.empresa_id AND s.id = l.solicitacao_id
        WHERE l.empresa_id = f.empresa_id AND l.sha256 = f.sha256
          AND (s.status NOT IN ('recusado', 'expirado', 'revogado') OR s.atualizado_em >= $antes))"
    };
}

statement! {
    /// Companies (in id order) with a file whose bytes retention may delete: a walk of each
    /// company's files by key until one is found (per_company.rs).
    struct CompaniesWithExpirableFiles {
        antes: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    companies_with!(concat!(
        "SELECT 1 FROM evidencias_arquivos f WHERE f.empresa_id = e.empresa_id AND ",
        expirable!()
    ))
}

statement! {
    /// Retention, within one company: the bytes of files no longer kept, marked deleted (the rows
    /// and the log stay). A file is kept while one of the requests linking it is open or changed
    /// since `antes`. Within one company, as every worker statement (per_company.rs): Citus
    /// refuses a `FOR UPDATE` across shards while planning, and a refusal there leaves the
    /// connection unable to delegate the owner's functions afterwards (docs/scaling.md, "make
    /// test-citus under least privilege").
    struct ExpireBytes {
        empresa: Uuid as SqlUuid,
        antes: DateTime<Utc> as Timestamptz,
        agora: DateTime<Utc> as Timestamptz,
        limite: i64 as BigInt,
    }
    concat!(
        "UPDATE evidencias_arquivos a SET bytes_apagados_em = $agora
FROM (
    SELECT f.empresa_id, f.sha256 FROM evidencias_arquivos f
    WHERE f.empresa_id = $empresa AND ",
        expirable!(),
        "
    ORDER BY f.criado_em
    LIMIT $limite
    FOR UPDATE SKIP LOCKED
) due
WHERE a.empresa_id = $empresa AND a.empresa_id = due.empresa_id AND a.sha256 = due.sha256
RETURNING a.empresa_id, a.objeto_id, a.sha256"
    )
}

statement! {
    /// One part of an object kept in PostgreSQL.
    struct WritePart<'a> {
        empresa: Uuid as SqlUuid,
        objeto: Uuid as SqlUuid,
        indice: i64 as BigInt,
        bytes: &'a [u8] as Bytea,
    }
    "INSERT INTO evidencias_partes (empresa_id, objeto_id, indice, bytes)
VALUES ($empresa, $objeto, $indice, $bytes)
ON CONFLICT (empresa_id, objeto_id, indice) DO UPDATE SET bytes = EXCLUDED.bytes"
}

statement! {
    struct ReadPart {
        empresa: Uuid as SqlUuid,
        objeto: Uuid as SqlUuid,
        indice: i64 as BigInt,
    }
    "SELECT bytes FROM evidencias_partes
WHERE empresa_id = $empresa AND objeto_id = $objeto AND indice = $indice"
}

statement! {
    struct DeleteObject {
        empresa: Uuid as SqlUuid,
        objeto: Uuid as SqlUuid,
    }
    "DELETE FROM evidencias_partes WHERE empresa_id = $empresa AND objeto_id = $objeto"
}

statement! {
    /// The parts of uploads begun before `antes` that no file with its bytes names: left by a
    /// process killed mid-upload, or by a retention round cut short between marking a file and
    /// deleting its parts. At most `limite` objects a round; answers how many.
    struct SweepAbandoned {
        antes: DateTime<Utc> as Timestamptz,
        limite: i64 as BigInt,
    }
    "WITH abandonados AS (
    SELECT DISTINCT o.empresa_id, o.objeto_id FROM evidencias_partes o
    WHERE o.criado_em < $antes
      AND NOT EXISTS (
        SELECT 1 FROM evidencias_arquivos a
        WHERE a.empresa_id = o.empresa_id AND a.objeto_id = o.objeto_id
          AND a.bytes_apagados_em IS NULL)
    LIMIT $limite
), apagadas AS (
    DELETE FROM evidencias_partes p USING abandonados
    WHERE p.empresa_id = abandonados.empresa_id AND p.objeto_id = abandonados.objeto_id
    RETURNING p.empresa_id, p.objeto_id
)
SELECT count(DISTINCT (empresa_id, objeto_id)) AS objetos FROM apagadas"
}

#[derive(QueryableByName)]
struct FileRow {
    #[diesel(sql_type = Text)]
    sha256: String,
    #[diesel(sql_type = BigInt)]
    tamanho: i64,
    #[diesel(sql_type = Text)]
    tipo: String,
    #[diesel(sql_type = Timestamptz)]
    criado_em: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    bytes_apagados_em: Option<DateTime<Utc>>,
    #[diesel(sql_type = SqlUuid)]
    objeto_id: Uuid,
}

impl From<FileRow> for EvidenceFile {
    fn from(row: FileRow) -> Self {
        EvidenceFile {
            sha256: row.sha256,
            size: u64::try_from(row.tamanho).unwrap_or(0),
            media_type: row.tipo,
            created_at: row.criado_em,
            bytes_deleted_at: row.bytes_apagados_em,
        }
    }
}

#[derive(QueryableByName)]
struct LinkRow {
    #[diesel(sql_type = Text)]
    resultado: String,
}

#[derive(QueryableByName)]
struct ExpiredRow {
    #[diesel(sql_type = SqlUuid)]
    empresa_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    objeto_id: Uuid,
    #[diesel(sql_type = Text)]
    sha256: String,
}

#[derive(QueryableByName)]
struct SweptRow {
    #[diesel(sql_type = BigInt)]
    objetos: i64,
}

#[derive(QueryableByName)]
struct PartRow {
    #[diesel(sql_type = Bytea)]
    bytes: Vec<u8>,
}

impl EvidenceFileRepository for PgEvidenceFiles {
    fn store(
        &self,
        company: CompanyId,
        file: &EvidenceFile,
        object: Uuid,
        kind: StorageKind,
    ) -> Result<StoredFile, RepoError> {
        let size =
            i64::try_from(file.size).map_err(|e| RepoError::Unexpected(anyhow::Error::new(e)))?;
        with_conn(&self.pool, "storing an evidence file", |conn| {
            let inserted = InsertFile {
                empresa: company.0,
                sha256: &file.sha256,
                tamanho: size,
                tipo: &file.media_type,
                armazenamento: kind.as_str(),
                objeto: object,
                criado_em: file.created_at,
            }
            .get_result::<FileRow>(conn)
            .optional()?;
            if let Some(row) = inserted {
                return Ok(StoredFile::Created(row.into()));
            }
            let existing = FindFile {
                empresa: company.0,
                sha256: &file.sha256,
            }
            .get_result::<FileRow>(conn)?;
            Ok(StoredFile::Existing(existing.into()))
        })
    }

    fn find(&self, company: CompanyId, sha256: &str) -> Result<Option<LocatedFile>, RepoError> {
        let row = with_conn(&self.pool, "finding an evidence file", |conn| {
            FindFile {
                empresa: company.0,
                sha256,
            }
            .get_result::<FileRow>(conn)
            .optional()
        })?;
        Ok(row.map(|r| LocatedFile {
            object: r.objeto_id,
            file: r.into(),
        }))
    }

    fn link(
        &self,
        company: CompanyId,
        request: Uuid,
        sha256: &str,
        at: DateTime<Utc>,
    ) -> Result<EvidenceLink, RepoError> {
        let outcome = with_conn(&self.pool, "linking an evidence file", |conn| {
            conn.transaction(|conn| {
                let transacao = settled::transaction_id(conn)?;
                Link {
                    empresa: company.0,
                    solicitacao: request,
                    sha256,
                    em: at,
                    transacao,
                }
                .get_result::<LinkRow>(conn)
            })
        })?;
        match outcome.resultado.as_str() {
            "vinculado" => Ok(EvidenceLink::Linked),
            "ja_vinculado" => Ok(EvidenceLink::AlreadyLinked),
            "sem_arquivo" => Ok(EvidenceLink::NoFile),
            "sem_solicitacao" => Ok(EvidenceLink::NoRequest),
            other => Err(RepoError::Unexpected(anyhow::anyhow!(
                "evidencia_vincular answered {other:?}"
            ))),
        }
    }

    fn linked(&self, company: CompanyId, request: Uuid) -> Result<Vec<EvidenceFile>, RepoError> {
        let rows = with_conn(&self.pool, "listing a request's evidence files", |conn| {
            LinkedFiles {
                empresa: company.0,
                solicitacao: request,
            }
            .load::<FileRow>(conn)
        })?;
        Ok(rows.into_iter().map(EvidenceFile::from).collect())
    }

    fn expire_bytes(
        &self,
        before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ExpiredObject>, RepoError> {
        const OPERATION: &str = "expiring evidence files' bytes";
        let companies = with_conn(&self.pool, OPERATION, |conn| {
            CompaniesWithExpirableFiles {
                antes: before,
                limit: i64::from(limit),
            }
            .load::<CompanyIdRow>(conn)
        })?;
        let mut rows = Vec::new();
        share_among(companies, limit, OPERATION, |empresa, room| {
            let expired = with_conn(&self.pool, OPERATION, |conn| {
                ExpireBytes {
                    empresa,
                    antes: before,
                    agora: now,
                    limite: i64::from(room),
                }
                .load::<ExpiredRow>(conn)
            })?;
            let n = count_u32(expired.len());
            rows.extend(expired);
            Ok(n)
        })?;
        Ok(rows
            .into_iter()
            .map(|r| ExpiredObject {
                company: CompanyId(r.empresa_id),
                object: r.objeto_id,
                sha256: r.sha256,
            })
            .collect())
    }
}

impl PgEvidenceFiles {
    fn delete_object(&self, company: CompanyId, object: Uuid) -> Result<(), RepoError> {
        with_conn(&self.pool, "deleting an evidence file's parts", |conn| {
            DeleteObject {
                empresa: company.0,
                objeto: object,
            }
            .execute(conn)
        })?;
        Ok(())
    }
}

/// Objects are the upload's parts, named by its id (the row names the object once the hash is
/// checked): sealing moves nothing.
impl EvidenceStore for PgEvidenceFiles {
    fn kind(&self) -> StorageKind {
        StorageKind::Postgres
    }

    fn upload_part_bytes(&self) -> usize {
        EVIDENCE_PART_BYTES
    }

    fn write_part(
        &self,
        company: CompanyId,
        object: Uuid,
        index: u32,
        bytes: &[u8],
    ) -> Result<(), RepoError> {
        let indice = i64::from(index);
        with_conn(&self.pool, "writing a part of an evidence file", |conn| {
            WritePart {
                empresa: company.0,
                objeto: object,
                indice,
                bytes,
            }
            .execute(conn)
        })?;
        Ok(())
    }

    fn seal(
        &self,
        _company: CompanyId,
        _object: Uuid,
        _parts: u32,
        _sha256: &str,
    ) -> Result<(), RepoError> {
        Ok(())
    }

    fn discard(&self, company: CompanyId, object: Uuid) -> Result<(), RepoError> {
        self.delete_object(company, object)
    }

    fn read_part(
        &self,
        company: CompanyId,
        object: Uuid,
        _sha256: &str,
        index: u32,
        _size: u64,
    ) -> Result<Option<Vec<u8>>, RepoError> {
        let indice = i64::from(index);
        let row = with_conn(&self.pool, "reading a part of an evidence file", |conn| {
            ReadPart {
                empresa: company.0,
                objeto: object,
                indice,
            }
            .get_result::<PartRow>(conn)
            .optional()
        })?;
        Ok(row.map(|r| r.bytes))
    }

    fn delete(&self, company: CompanyId, object: Uuid, _sha256: &str) -> Result<(), RepoError> {
        self.delete_object(company, object)
    }

    fn sweep_abandoned(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        let swept = with_conn(&self.pool, "deleting abandoned evidence parts", |conn| {
            SweepAbandoned {
                antes: before,
                limite: i64::from(limit),
            }
            .get_result::<SweptRow>(conn)
        })?;
        Ok(u32::try_from(swept.objetos).unwrap_or(u32::MAX))
    }
}
