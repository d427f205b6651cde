//! The grammar (`grammar/blk.pest`) as pest's parser and its `Rule`s.

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/blk.pest"]
pub(super) struct BlkParser;
