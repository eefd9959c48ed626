mod engines;
mod ledger;
mod postgres;
