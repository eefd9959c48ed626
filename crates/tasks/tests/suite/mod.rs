mod ledger;
