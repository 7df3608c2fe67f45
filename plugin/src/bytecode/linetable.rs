//! Source positions of code units, decoded from CPython 3.11+'s location table (`co_linetable`)
//! exactly as `code.co_positions()` reports them.

/// Where an instruction comes from; `None` where the table says "no location" (or no column).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Position {
    pub line: Option<i32>,
    pub end_line: Option<i32>,
    pub col: Option<u32>,
    pub end_col: Option<u32>,
}

impl Position {
    /// The four numbers `InstructionSequence::addop` takes: (line, col, end line, end col),
    /// -1 for "none".
    pub fn to_addop_args(self) -> [i32; 4] {
        let col = |c: Option<u32>| c.map_or(-1, |c| c as i32);
        [
            self.line.unwrap_or(-1),
            col(self.col),
            self.end_line.unwrap_or(-1),
            col(self.end_col),
        ]
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = |v: Option<i64>| v.map_or("-".to_owned(), |v| v.to_string());
        write!(
            f,
            "{}:{}-{}:{}",
            n(self.line.map(i64::from)),
            n(self.col.map(i64::from)),
            n(self.end_line.map(i64::from)),
            n(self.end_col.map(i64::from))
        )
    }
}

/// One position per code unit (`units` of them). A table that ends early leaves the rest
/// without a location, as CPython does; a malformed entry is an error.
pub fn decode_positions(
    table: &[u8],
    first_line: i32,
    units: usize,
) -> Result<Vec<Position>, String> {
    let mut out = Vec::with_capacity(units);
    let mut reader = Reader { table, pos: 0 };
    let mut line = first_line;
    while reader.pos < table.len() && out.len() < units {
        let header = reader.byte()?;
        if header & 0x80 == 0 {
            return Err(format!(
                "location table: byte {} does not start an entry",
                reader.pos - 1
            ));
        }
        let code = (header >> 3) & 0x0f;
        let length = usize::from(header & 0x07) + 1;
        let position = match code {
            15 => Position::default(),
            14 => {
                line += reader.signed_varint()?;
                let end_line = line + reader.varint()? as i32;
                let col = reader.varint()?;
                let end_col = reader.varint()?;
                Position {
                    line: Some(line),
                    end_line: Some(end_line),
                    col: col.checked_sub(1),
                    end_col: end_col.checked_sub(1),
                }
            }
            13 => {
                line += reader.signed_varint()?;
                Position {
                    line: Some(line),
                    end_line: Some(line),
                    col: None,
                    end_col: None,
                }
            }
            10..=12 => {
                line += i32::from(code - 10);
                let col = u32::from(reader.byte()?);
                let end_col = u32::from(reader.byte()?);
                Position {
                    line: Some(line),
                    end_line: Some(line),
                    col: Some(col),
                    end_col: Some(end_col),
                }
            }
            _ => {
                let second = reader.byte()?;
                let col = u32::from(code) * 8 + u32::from((second >> 4) & 7);
                Position {
                    line: Some(line),
                    end_line: Some(line),
                    col: Some(col),
                    end_col: Some(col + u32::from(second & 15)),
                }
            }
        };
        for _ in 0..length {
            out.push(position);
        }
    }
    out.truncate(units);
    out.resize(units, Position::default());
    Ok(out)
}

struct Reader<'a> {
    table: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self
            .table
            .get(self.pos)
            .ok_or_else(|| "location table: truncated entry".to_owned())?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u32, String> {
        let mut b = self.byte()?;
        let mut value = u32::from(b & 63);
        let mut shift = 0;
        while b & 64 != 0 {
            b = self.byte()?;
            shift += 6;
            if shift > 30 {
                return Err("location table: varint too long".to_owned());
            }
            value |= u32::from(b & 63) << shift;
        }
        Ok(value)
    }

    fn signed_varint(&mut self) -> Result<i32, String> {
        let v = self.varint()?;
        Ok(if v & 1 != 0 {
            -((v >> 1) as i32)
        } else {
            (v >> 1) as i32
        })
    }
}
