//! Reading an imported file as it arrives (docs/imports.md, "The file"): JSON Lines, or CSV per
//! RFC 4180 with a header, comma or semicolon separated, with or without a UTF-8 BOM. Records
//! are cut from the stream one at a time, each bounded ([`MAX_LINE_BYTES`]: a longer one is a
//! line error and is skipped without being held), so a file of any size is read in bounded
//! memory.
//!
//! Hand-written rather than the `csv` crate: that crate grows a record's buffer without bound
//! (a 10 MB field is held whole), and a record here must be cut at a bound and reported by its
//! line number in the file; RFC 4180's grammar is a few states.

use std::io::{BufRead, Read};

use domain::import::import_field;
use domain::{FieldError, ImportLineDraft};

use crate::dto::import::{LinhaImportacao, COLUMNS};

/// The longest record, in bytes: a proof of 100,000 characters with room for JSON escapes.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// The file's format, from the request's `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    JsonLines,
    Csv,
}

impl Format {
    /// `application/x-ndjson`, `application/jsonl` (or `application/json-lines`,
    /// `application/x-jsonlines`) or `text/csv`; parameters ignored.
    pub fn of_content_type(value: &str) -> Option<Format> {
        let essence = value.split(';').next()?.trim().to_ascii_lowercase();
        match essence.as_str() {
            "application/x-ndjson"
            | "application/jsonl"
            | "application/json-lines"
            | "application/x-jsonlines" => Some(Format::JsonLines),
            "text/csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

/// Why the file as a whole could not be read.
#[derive(Debug)]
pub enum FileError {
    /// The body stream failed (over the byte limit, timed out, reset).
    Read(std::io::Error),
    /// The CSV header names a column that is not a field (or none).
    Header(String),
}

/// One record: its line number in the file and its bytes, or why it was cut.
struct Record {
    line: u64,
    bytes: Vec<u8>,
    too_long: bool,
}

/// Cuts records from `input`: at a newline outside quotes (CSV) or at every newline (JSON
/// Lines). A trailing `\r` is dropped.
struct Records<R> {
    input: R,
    quoted: bool,
    next_line: u64,
    first: bool,
}

impl<R: BufRead> Records<R> {
    fn new(input: R, quoted: bool) -> Self {
        Self {
            input,
            quoted,
            next_line: 1,
            first: true,
        }
    }

    fn next(&mut self) -> Result<Option<Record>, std::io::Error> {
        let line = self.next_line;
        let mut bytes = Vec::new();
        let mut too_long = false;
        let mut in_quotes = false;
        let mut any = false;
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let mut start = 0;
            if self.first {
                self.first = false;
                if buf.starts_with(b"\xEF\xBB\xBF") {
                    start = 3;
                }
            }
            let mut end = None;
            for (i, &b) in buf.iter().enumerate().skip(start) {
                if self.quoted && b == b'"' {
                    in_quotes = !in_quotes;
                } else if b == b'\n' {
                    self.next_line += 1;
                    if !in_quotes {
                        end = Some(i);
                        break;
                    }
                }
            }
            let stop = end.unwrap_or(buf.len());
            if !too_long {
                if bytes.len() + (stop - start) > MAX_LINE_BYTES {
                    too_long = true;
                    bytes = Vec::new();
                } else {
                    bytes.extend_from_slice(&buf[start..stop]);
                }
            }
            let consumed = end.map_or(buf.len(), |i| i + 1);
            self.input.consume(consumed);
            if end.is_some() {
                break;
            }
        }
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        Ok(Some(Record {
            line,
            bytes,
            too_long,
        }))
    }
}

/// Reads `input` as `format`, handing each non-blank record to `line` with its line number.
/// `line` may stop the reading with its own error (`Err(Some(e))`).
pub fn read<R: Read, E>(
    input: R,
    format: Format,
    mut line: impl FnMut(u64, Result<ImportLineDraft, FieldError>) -> Result<(), E>,
) -> Result<(), ReadError<E>> {
    let reader = std::io::BufReader::with_capacity(64 * 1024, input);
    let mut records = Records::new(reader, format == Format::Csv);
    let mut csv: Option<(u8, Vec<&'static str>)> = None;
    while let Some(record) = records
        .next()
        .map_err(|e| ReadError::File(FileError::Read(e)))?
    {
        if record.too_long {
            line(
                record.line,
                Err(FieldError::new(
                    import_field::LINE,
                    format!("a linha excede o limite de {MAX_LINE_BYTES} bytes"),
                )),
            )
            .map_err(ReadError::Line)?;
            continue;
        }
        if record.bytes.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        if format == Format::Csv && csv.is_none() {
            csv = Some(header(&record.bytes).map_err(ReadError::File)?);
            continue;
        }
        let parsed = match std::str::from_utf8(&record.bytes) {
            Err(_) => Err(FieldError::new(
                import_field::LINE,
                "a linha não é texto UTF-8 válido",
            )),
            Ok(text) if text.contains('\0') => Err(FieldError::new(
                import_field::LINE,
                domain::consent_request::NUL_CHARACTER_MESSAGE,
            )),
            Ok(text) => match &csv {
                None => json_line(text),
                Some((separator, columns)) => csv_line(text, *separator, columns),
            },
        };
        line(record.line, parsed).map_err(ReadError::Line)?;
    }
    Ok(())
}

/// Why [`read`] stopped.
#[derive(Debug)]
pub enum ReadError<E> {
    File(FileError),
    Line(E),
}

fn json_line(text: &str) -> Result<ImportLineDraft, FieldError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    match serde_path_to_error::deserialize::<_, LinhaImportacao>(de) {
        Ok(l) => Ok(l.into()),
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // serde's own messages may quote the value (a CPF): only its kind goes on
            if path.is_empty() || path == "." || !COLUMNS.contains(&path.as_str()) {
                Err(FieldError::new(
                    import_field::LINE,
                    crate::media::describe_serde_error(&inner),
                ))
            } else {
                Err(FieldError::new(path, "valor de tipo ou formato inválido"))
            }
        }
    }
}

/// The separator (`,` or `;`, whichever the header has more of outside quotes) and the columns.
fn header(bytes: &[u8]) -> Result<(u8, Vec<&'static str>), FileError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| FileError::Header("o cabeçalho não é texto UTF-8 válido".into()))?;
    let semicolons = text.matches(';').count();
    let commas = text.matches(',').count();
    let separator = if semicolons > commas { b';' } else { b',' };
    let mut columns = Vec::new();
    for name in fields(text, separator).map_err(FileError::Header)? {
        let name = name.trim();
        match COLUMNS.iter().find(|c| **c == name) {
            Some(c) if columns.contains(c) => {
                return Err(FileError::Header(format!(
                    "coluna repetida no cabeçalho: {c}"
                )))
            }
            Some(c) => columns.push(*c),
            None => {
                let shown: String = name.chars().take(60).collect();
                return Err(FileError::Header(format!(
                    "coluna desconhecida no cabeçalho: {shown:?}; use {}",
                    COLUMNS.join(", ")
                )));
            }
        }
    }
    Ok((separator, columns))
}

/// RFC 4180 fields of one record: quoted fields may hold the separator, newlines and `""`.
fn fields(text: &str, separator: u8) -> Result<Vec<String>, String> {
    let separator = separator as char;
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
        } else if c == separator {
            out.push(std::mem::take(&mut field));
            was_quoted = false;
        } else if c == '"' && field.is_empty() && !was_quoted {
            quoted = true;
            was_quoted = true;
        } else if c == '"' {
            return Err("aspas fora de um campo entre aspas".into());
        } else {
            field.push(c);
        }
    }
    if quoted {
        return Err("campo entre aspas sem aspas de fechamento".into());
    }
    out.push(field);
    Ok(out)
}

fn csv_line(
    text: &str,
    separator: u8,
    columns: &[&'static str],
) -> Result<ImportLineDraft, FieldError> {
    let values = fields(text, separator).map_err(|m| FieldError::new(import_field::LINE, m))?;
    if values.len() != columns.len() {
        return Err(FieldError::new(
            import_field::LINE,
            format!(
                "a linha tem {} campos e o cabeçalho {}",
                values.len(),
                columns.len()
            ),
        ));
    }
    // the same decoding as a JSON line: an object of the non-empty cells
    let mut object = serde_json::Map::new();
    for (name, value) in columns.iter().zip(values) {
        if !value.is_empty() {
            object.insert((*name).to_owned(), serde_json::Value::String(value));
        }
    }
    match serde_path_to_error::deserialize::<_, LinhaImportacao>(serde_json::Value::Object(object))
    {
        Ok(l) => Ok(l.into()),
        Err(e) => {
            let path = e.path().to_string();
            Err(FieldError::new(
                if COLUMNS.contains(&path.as_str()) {
                    path
                } else {
                    import_field::LINE.to_owned()
                },
                "valor de tipo ou formato inválido",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(body: &[u8], format: Format) -> Vec<(u64, Result<ImportLineDraft, FieldError>)> {
        let mut out = Vec::new();
        read::<_, ()>(body, format, |n, l| {
            out.push((n, l));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn a_csv_with_a_bom_semicolons_and_a_quoted_newline_is_read_by_file_line() {
        let body = "\u{feff}idExterno;origem;provaColeta\r\na;crm;\"uma\nprova; com \"\"aspas\"\"\"\r\nb;crm;\r\n";
        let read = lines(body.as_bytes(), Format::Csv);
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].0, 2);
        let first = read[0].1.as_ref().unwrap();
        assert_eq!(first.external_id.as_deref(), Some("a"));
        assert_eq!(
            first.consent.proof_of_collection.as_deref(),
            Some("uma\nprova; com \"aspas\"")
        );
        assert_eq!(read[1].0, 4);
        assert_eq!(
            read[1].1.as_ref().unwrap().consent.proof_of_collection,
            None
        );
    }

    #[test]
    fn an_unknown_column_stops_the_file() {
        let err = read::<_, ()>(&b"idExterno,cpf\n"[..], Format::Csv, |_, _| Ok(())).unwrap_err();
        assert!(matches!(err, ReadError::File(FileError::Header(_))));
    }

    #[test]
    fn bad_lines_are_errors_of_their_own_line() {
        let mut body = b"{\"idExterno\":\"a\"}\n\xff\xfe\n{\"idExterno\":\"a\0\"}\n".to_vec();
        body.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 10));
        body.extend(b"\n{\"cpfTitular\": 12}\n");
        let read = lines(&body, Format::JsonLines);
        let got: Vec<(u64, Option<String>)> = read
            .iter()
            .map(|(n, l)| (*n, l.as_ref().err().map(|e| e.field.clone())))
            .collect();
        assert_eq!(
            got,
            [
                (1, None),
                (2, Some("linha".into())),
                (3, Some("linha".into())),
                (4, Some("linha".into())),
                (5, Some("cpfTitular".into())),
            ]
        );
    }
}
