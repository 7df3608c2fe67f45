mod comment_ranges;
mod comments;
mod cursor;
mod pragmas;
pub mod textwrap;
mod tokenizer;
mod whitespace;

pub use comment_ranges::{CommentRanges, ParenthesizedExpressions, TriviaRanges};
pub use comments::*;
pub use cursor::*;
pub use pragmas::*;
pub use tokenizer::*;
pub use whitespace::*;
