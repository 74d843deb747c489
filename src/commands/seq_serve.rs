//! `yaraus seq serve`: the RESP2 front of the majority sequence.

use crate::cli::{GlobalArgs, SeqServeArgs};
use crate::error::{Error, Result};

pub async fn serve(_global: &GlobalArgs, _args: SeqServeArgs, _durable: bool) -> Result<i32> {
    Err(Error::State("seq serve is not built yet".into()))
}
