mod engines;
mod ledger;
