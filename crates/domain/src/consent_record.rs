//! What a consent record in the ISO/IEC TS 27560 form needs beyond the request itself (issue 37,
//! part 6; docs/records.md): the company's annotation of each use case (its LGPD legal basis,
//! the personal-data categories it processes, its notice) and the company's controller profile.
//! The rendering in DPV's JSON-LD is the HTTP layer's; the rules of the inputs are here.

use chrono::{DateTime, Utc};

use crate::ValidationErrors;

/// The LGPD article a legal basis comes from: 7 (personal data) or 11 (sensitive personal data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LgpdArticle {
    /// Art. 7: the hypotheses for personal data.
    Art7,
    /// Art. 11: the hypotheses for sensitive personal data.
    Art11,
}

impl LgpdArticle {
    /// The article's number (`7`, `11`), as on the wire and in the database.
    pub fn number(self) -> i16 {
        match self {
            LgpdArticle::Art7 => 7,
            LgpdArticle::Art11 => 11,
        }
    }

    /// The article of this number, if it is 7 or 11.
    pub fn from_number(n: i64) -> Option<LgpdArticle> {
        match n {
            7 => Some(LgpdArticle::Art7),
            11 => Some(LgpdArticle::Art11),
            _ => None,
        }
    }
}

/// A hypothesis of LGPD art. 7 (incisos I-X) or art. 11 (I, II a-g) under which a use case
/// processes personal data. Wire names are lower-case, hyphenated Portuguese.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LegalHypothesis {
    /// Art. 7 I / art. 11 I.
    Consentimento,
    /// Art. 7 II / art. 11 II a.
    ObrigacaoLegal,
    /// Art. 7 III / art. 11 II b.
    PoliticasPublicas,
    /// Art. 7 IV / art. 11 II c.
    EstudosPesquisa,
    /// Art. 7 V only.
    ExecucaoContrato,
    /// Art. 7 VI / art. 11 II d.
    ExercicioDireitos,
    /// Art. 7 VII / art. 11 II e.
    ProtecaoVida,
    /// Art. 7 VIII / art. 11 II f.
    TutelaSaude,
    /// Art. 7 IX only.
    InteresseLegitimo,
    /// Art. 7 X only.
    ProtecaoCredito,
    /// Art. 11 II g only.
    PrevencaoFraude,
}

impl LegalHypothesis {
    /// Every hypothesis.
    pub const ALL: [LegalHypothesis; 11] = [
        LegalHypothesis::Consentimento,
        LegalHypothesis::ObrigacaoLegal,
        LegalHypothesis::PoliticasPublicas,
        LegalHypothesis::EstudosPesquisa,
        LegalHypothesis::ExecucaoContrato,
        LegalHypothesis::ExercicioDireitos,
        LegalHypothesis::ProtecaoVida,
        LegalHypothesis::TutelaSaude,
        LegalHypothesis::InteresseLegitimo,
        LegalHypothesis::ProtecaoCredito,
        LegalHypothesis::PrevencaoFraude,
    ];

    /// The wire and database name.
    pub fn as_str(self) -> &'static str {
        match self {
            LegalHypothesis::Consentimento => "consentimento",
            LegalHypothesis::ObrigacaoLegal => "obrigacao-legal",
            LegalHypothesis::PoliticasPublicas => "politicas-publicas",
            LegalHypothesis::EstudosPesquisa => "estudos-pesquisa",
            LegalHypothesis::ExecucaoContrato => "execucao-contrato",
            LegalHypothesis::ExercicioDireitos => "exercicio-direitos",
            LegalHypothesis::ProtecaoVida => "protecao-vida",
            LegalHypothesis::TutelaSaude => "tutela-saude",
            LegalHypothesis::InteresseLegitimo => "interesse-legitimo",
            LegalHypothesis::ProtecaoCredito => "protecao-credito",
            LegalHypothesis::PrevencaoFraude => "prevencao-fraude",
        }
    }

    /// Parses the wire name; exact, lower-case names only.
    pub fn parse(raw: &str) -> Option<LegalHypothesis> {
        LegalHypothesis::ALL.into_iter().find(|h| h.as_str() == raw)
    }

    /// Its inciso in `article`, or `None` when the article has no such hypothesis (a contract,
    /// a legitimate interest and credit protection are not bases for sensitive data; fraud
    /// prevention is one only for sensitive data).
    pub fn inciso(self, article: LgpdArticle) -> Option<&'static str> {
        use LegalHypothesis::*;
        match article {
            LgpdArticle::Art7 => Some(match self {
                Consentimento => "I",
                ObrigacaoLegal => "II",
                PoliticasPublicas => "III",
                EstudosPesquisa => "IV",
                ExecucaoContrato => "V",
                ExercicioDireitos => "VI",
                ProtecaoVida => "VII",
                TutelaSaude => "VIII",
                InteresseLegitimo => "IX",
                ProtecaoCredito => "X",
                PrevencaoFraude => return None,
            }),
            LgpdArticle::Art11 => Some(match self {
                Consentimento => "I",
                ObrigacaoLegal => "II, a",
                PoliticasPublicas => "II, b",
                EstudosPesquisa => "II, c",
                ExercicioDireitos => "II, d",
                ProtecaoVida => "II, e",
                TutelaSaude => "II, f",
                PrevencaoFraude => "II, g",
                ExecucaoContrato | InteresseLegitimo | ProtecaoCredito => return None,
            }),
        }
    }
}

/// A legal basis: a hypothesis of one article (checked to exist there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LegalBasis {
    /// The article (`baseLegal.artigo`).
    pub article: LgpdArticle,
    /// The hypothesis (`baseLegal.hipotese`).
    pub hypothesis: LegalHypothesis,
}

impl LegalBasis {
    /// `LGPD, art. 7, I`: how the record cites it.
    pub fn citation(&self) -> String {
        format!(
            "LGPD (Lei 13.709/2018), art. {}, {}",
            self.article.number(),
            self.hypothesis.inciso(self.article).unwrap_or("?")
        )
    }

    /// The DPV legal-basis concept it maps to (docs/records.md, "Legal bases"): consent under
    /// art. 7 I is expressed consent ("livre, informada e inequívoca"), under art. 11 I
    /// explicitly expressed ("de forma específica e destacada"); the hypotheses DPV has no
    /// concept for are `dpv:LegalBasis` itself, the record citing the article beside it.
    pub fn dpv_term(&self) -> &'static str {
        use LegalHypothesis::*;
        match (self.hypothesis, self.article) {
            (Consentimento, LgpdArticle::Art7) => "dpv:ExpressedConsent",
            (Consentimento, LgpdArticle::Art11) => "dpv:ExplicitlyExpressedConsent",
            (ObrigacaoLegal, _) => "dpv:LegalObligation",
            (PoliticasPublicas, _) => "dpv:OfficialAuthorityOfController",
            (EstudosPesquisa, _) => "dpv:PublicInterest",
            (ExecucaoContrato, _) => "dpv:Contract",
            (ProtecaoVida, _) => "dpv:VitalInterest",
            (InteresseLegitimo, _) | (ProtecaoCredito, _) => "dpv:LegitimateInterest",
            (ExercicioDireitos, _) | (TutelaSaude, _) | (PrevencaoFraude, _) => "dpv:LegalBasis",
        }
    }
}

/// The personal-data categories a use case may name: DPV's `pd:` terms this service supports
/// (a fixed list, each defined in DPV 2.3's pd vocabulary; docs/records.md lists them).
pub const PERSONAL_DATA_CATEGORIES: &[&str] = &[
    "pd:Name",
    "pd:OfficialID",
    "pd:BirthDate",
    "pd:Age",
    "pd:Gender",
    "pd:Nationality",
    "pd:MaritalStatus",
    "pd:EmailAddress",
    "pd:TelephoneNumber",
    "pd:PhysicalAddress",
    "pd:PostalCode",
    "pd:Location",
    "pd:Income",
    "pd:Salary",
    "pd:BankAccount",
    "pd:PaymentCardNumber",
    "pd:Transaction",
    "pd:Credit",
    "pd:CreditRecord",
    "pd:CreditScore",
    "pd:LoanRecord",
    "pd:Tax",
    "pd:Insurance",
    "pd:Job",
    "pd:EmploymentHistory",
    "pd:Education",
    "pd:IPAddress",
    "pd:DeviceBased",
    "pd:Purchase",
    "pd:Health",
    "pd:Biometric",
    "pd:Genetic",
    "pd:EthnicOrigin",
    "pd:Religion",
    "pd:PoliticalOpinion",
    "pd:TradeUnionMembership",
    "pd:SexualPreference",
];

/// The most categories one use case may name.
pub const MAX_CATEGORIES: usize = 64;
/// The longest notice URL accepted.
pub const MAX_NOTICE_URL: usize = 2048;
/// The longest text of a controller profile's field.
pub const MAX_PROFILE_FIELD: usize = 500;

/// The company's annotation of one of its use cases (`PUT /api/casos-de-uso/{id}/anotacoes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseCaseAnnotation {
    /// The LGPD legal basis (`baseLegal`).
    pub legal_basis: LegalBasis,
    /// `pd:` terms from [`PERSONAL_DATA_CATEGORIES`], without repetition, in the order given.
    pub categories: Vec<String>,
    /// An absolute `https` or `http` URL of the notice the subject is shown.
    pub notice_url: String,
    /// The notice's language, a BCP 47 tag (`pt-BR`).
    pub notice_language: String,
    /// When it was last set (set by the service).
    pub updated_at: DateTime<Utc>,
}

/// An annotation as submitted, before its rules are checked.
#[derive(Debug, Clone, Default)]
pub struct UseCaseAnnotationDraft {
    /// `baseLegal.artigo`.
    pub article: Option<i64>,
    /// `baseLegal.hipotese`.
    pub hypothesis: Option<String>,
    /// `categoriasDados`.
    pub categories: Option<Vec<String>>,
    /// `urlAviso`.
    pub notice_url: Option<String>,
    /// `idiomaAviso`.
    pub notice_language: Option<String>,
}

impl UseCaseAnnotationDraft {
    /// Checks every rule and reports every broken one under its wire name
    /// (`baseLegal.artigo`, `baseLegal.hipotese`, `categoriasDados`, `urlAviso`, `idiomaAviso`);
    /// no message quotes the submitted value.
    pub fn validate(self, now: DateTime<Utc>) -> Result<UseCaseAnnotation, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let article = match self.article {
            None => {
                errors.push("baseLegal.artigo", "Informe o artigo da LGPD: 7 ou 11.");
                None
            }
            Some(n) => {
                let article = LgpdArticle::from_number(n);
                if article.is_none() {
                    errors.push("baseLegal.artigo", "O artigo da LGPD deve ser 7 ou 11.");
                }
                article
            }
        };
        let hypothesis = match self.hypothesis.as_deref().map(str::trim) {
            None | Some("") => {
                errors.push("baseLegal.hipotese", "Informe a hipótese legal.");
                None
            }
            Some(raw) => {
                let h = LegalHypothesis::parse(raw);
                match (h, article) {
                    (None, _) => errors.push(
                        "baseLegal.hipotese",
                        "Hipótese legal desconhecida; veja a lista em docs/records.md.",
                    ),
                    (Some(h), Some(a)) if h.inciso(a).is_none() => errors.push(
                        "baseLegal.hipotese",
                        format!("Esta hipótese não existe no art. {} da LGPD.", a.number()),
                    ),
                    _ => {}
                }
                h
            }
        };
        let mut categories = Vec::new();
        match self.categories {
            None => errors.push(
                "categoriasDados",
                "Informe ao menos uma categoria de dados pessoais.",
            ),
            Some(list) if list.is_empty() => errors.push(
                "categoriasDados",
                "Informe ao menos uma categoria de dados pessoais.",
            ),
            Some(list) if list.len() > MAX_CATEGORIES => errors.push(
                "categoriasDados",
                format!("No máximo {MAX_CATEGORIES} categorias."),
            ),
            Some(list) => {
                for (i, c) in list.into_iter().enumerate() {
                    if !PERSONAL_DATA_CATEGORIES.contains(&c.as_str()) {
                        errors.push(
                            format!("categoriasDados[{i}]"),
                            "Categoria não suportada; use um termo pd: da lista em docs/records.md.",
                        );
                    } else if categories.contains(&c) {
                        errors.push(format!("categoriasDados[{i}]"), "Categoria repetida.");
                    } else {
                        categories.push(c);
                    }
                }
            }
        }
        let notice_url = self.notice_url.unwrap_or_default().trim().to_owned();
        if notice_url.is_empty() {
            errors.push("urlAviso", "Informe a URL do aviso de privacidade.");
        } else if !is_web_url(&notice_url) {
            errors.push(
                "urlAviso",
                format!("Deve ser uma URL http(s) absoluta de até {MAX_NOTICE_URL} caracteres."),
            );
        }
        let notice_language = self.notice_language.unwrap_or_default().trim().to_owned();
        if notice_language.is_empty() {
            errors.push(
                "idiomaAviso",
                "Informe o idioma do aviso (BCP 47, ex.: pt-BR).",
            );
        } else if !is_language_tag(&notice_language) {
            errors.push(
                "idiomaAviso",
                "Deve ser uma etiqueta de idioma BCP 47 (ex.: pt-BR).",
            );
        }
        match (article, hypothesis) {
            (Some(article), Some(hypothesis)) if errors.is_empty() => Ok(UseCaseAnnotation {
                legal_basis: LegalBasis {
                    article,
                    hypothesis,
                },
                categories,
                notice_url,
                notice_language,
                updated_at: now,
            }),
            _ => Err(errors),
        }
    }
}

/// The company as data controller: who the record names (`consent-api company profile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerProfile {
    /// Its name as controller (its legal name).
    pub name: String,
    /// Its postal address.
    pub address: String,
    /// The e-mail of its data protection officer (encarregado, LGPD art. 41).
    pub dpo_contact: String,
}

impl ControllerProfile {
    /// Trims the fields and checks them: none blank, none longer than [`MAX_PROFILE_FIELD`],
    /// no control characters, the DPO contact an e-mail address.
    pub fn new(name: &str, address: &str, dpo_contact: &str) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        for (field, value) in [
            ("nome", name),
            ("endereco", address),
            ("contatoDpo", dpo_contact),
        ] {
            let value = value.trim();
            if value.is_empty() {
                errors.push(field, "Não pode ficar em branco.");
            } else if value.chars().count() > MAX_PROFILE_FIELD
                || value.chars().any(char::is_control)
            {
                errors.push(
                    field,
                    format!(
                        "No máximo {MAX_PROFILE_FIELD} caracteres, sem caracteres de controle."
                    ),
                );
            }
        }
        let contact = dpo_contact.trim();
        if !contact.is_empty() && !is_email(contact) {
            errors.push("contatoDpo", "Deve ser um endereço de e-mail.");
        }
        errors.into_result(Self {
            name: name.trim().to_owned(),
            address: address.trim().to_owned(),
            dpo_contact: contact.to_owned(),
        })
    }
}

fn is_web_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    url.len() <= MAX_NOTICE_URL
        && rest.is_some_and(|r| {
            let host = r.split(['/', '?', '#']).next().unwrap_or("");
            !host.is_empty() && !r.chars().any(|c| c.is_whitespace() || c.is_control())
        })
}

/// A well-formed BCP 47 tag in the common shape (RFC 5646 `langtag`): a 2-3 or 5-8 letter
/// language, then subtags of 1-8 letters or digits, at most 35 characters.
fn is_language_tag(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let language = parts.next().unwrap_or("");
    tag.len() <= 35
        && matches!(language.len(), 2 | 3 | 5..=8)
        && language.chars().all(|c| c.is_ascii_alphabetic())
        && parts.all(|p| (1..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

fn is_email(value: &str) -> bool {
    match value.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !value.chars().any(|c| c.is_whitespace())
                && !domain.contains('@')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft() -> UseCaseAnnotationDraft {
        UseCaseAnnotationDraft {
            article: Some(7),
            hypothesis: Some("consentimento".to_owned()),
            categories: Some(vec!["pd:Name".to_owned(), "pd:EmailAddress".to_owned()]),
            notice_url: Some("https://example.com/privacidade".to_owned()),
            notice_language: Some("pt-BR".to_owned()),
        }
    }

    fn fields(e: ValidationErrors) -> Vec<String> {
        e.fields().iter().map(|f| f.field.clone()).collect()
    }

    #[test]
    fn a_good_annotation_is_accepted() {
        let a = draft().validate(DateTime::<Utc>::MIN_UTC).unwrap();
        assert_eq!(a.legal_basis.dpv_term(), "dpv:ExpressedConsent");
        assert_eq!(
            a.legal_basis.citation(),
            "LGPD (Lei 13.709/2018), art. 7, I"
        );
        assert_eq!(a.categories.len(), 2);
    }

    #[test]
    fn every_broken_rule_is_named() {
        let bad = UseCaseAnnotationDraft {
            article: Some(9),
            hypothesis: Some("palpite".to_owned()),
            categories: Some(vec!["pd:Name".to_owned(), "pd:Inventado".to_owned()]),
            notice_url: Some("ftp://x".to_owned()),
            notice_language: Some("portugues do brasil".to_owned()),
        };
        assert_eq!(
            fields(bad.validate(DateTime::<Utc>::MIN_UTC).unwrap_err()),
            [
                "baseLegal.artigo",
                "baseLegal.hipotese",
                "categoriasDados[1]",
                "urlAviso",
                "idiomaAviso"
            ]
        );
    }

    #[test]
    fn a_hypothesis_must_exist_in_its_article() {
        let mut d = draft();
        d.article = Some(11);
        d.hypothesis = Some("interesse-legitimo".to_owned());
        assert_eq!(
            fields(d.validate(DateTime::<Utc>::MIN_UTC).unwrap_err()),
            ["baseLegal.hipotese"]
        );
        let mut d = draft();
        d.article = Some(11);
        let a = d.validate(DateTime::<Utc>::MIN_UTC).unwrap();
        assert_eq!(a.legal_basis.dpv_term(), "dpv:ExplicitlyExpressedConsent");
        assert_eq!(
            a.legal_basis.citation(),
            "LGPD (Lei 13.709/2018), art. 11, I"
        );
    }

    #[test]
    fn every_hypothesis_exists_in_at_least_one_article() {
        for h in LegalHypothesis::ALL {
            assert!(
                h.inciso(LgpdArticle::Art7).is_some() || h.inciso(LgpdArticle::Art11).is_some()
            );
            assert_eq!(LegalHypothesis::parse(h.as_str()), Some(h));
        }
    }

    #[test]
    fn language_tags() {
        for good in ["pt", "pt-BR", "en-US", "zh-Hant-TW", "es-419"] {
            assert!(is_language_tag(good), "{good}");
        }
        for bad in ["", "p", "pt_BR", "pt-", "português", "pt-BR-abcdefghi"] {
            assert!(!is_language_tag(bad), "{bad}");
        }
    }

    #[test]
    fn a_profile_needs_every_field_and_an_email() {
        let e = ControllerProfile::new(" ", "Rua A, 1", "dpo").unwrap_err();
        assert_eq!(fields(e), ["nome", "contatoDpo"]);
        let p = ControllerProfile::new(" ACME S.A. ", "Rua A, 1", "dpo@acme.com.br").unwrap();
        assert_eq!(p.name, "ACME S.A.");
    }
}
