-- Revert history-search:tenant_accounts from pg
-- Back to one tenant: a database holding rows of another tenant cannot be
-- reverted past this change (the restored unique ids and check refuse them).
BEGIN;

DROP INDEX history.conversations_tenant_language_idx;
CREATE INDEX conversations_language_idx ON history.conversations (language);

ALTER TABLE history.memberships DROP CONSTRAINT memberships_account_key_fkey;
ALTER TABLE history.messages DROP CONSTRAINT messages_author_key_fkey;
ALTER TABLE history.identity_proofs DROP CONSTRAINT identity_proofs_account_a_key_fkey;
ALTER TABLE history.identity_proofs DROP CONSTRAINT identity_proofs_account_b_key_fkey;
ALTER TABLE history.conversation_authors DROP CONSTRAINT conversation_authors_author_key_fkey;
ALTER TABLE history.runs DROP CONSTRAINT runs_agent_key_fkey;
ALTER TABLE history.runs DROP CONSTRAINT runs_requester_key_fkey;
ALTER TABLE history.conversation_search_events DROP CONSTRAINT conversation_search_events_agent_key_fkey;
ALTER TABLE history.account_erasures DROP CONSTRAINT account_erasures_account_key_fkey;

ALTER TABLE history.account_erasures DROP CONSTRAINT account_erasures_pkey;
ALTER TABLE history.account_erasures DROP COLUMN tenant_key;
ALTER TABLE history.account_erasures ADD PRIMARY KEY (erasure_key);

ALTER TABLE history.identity_proofs DROP CONSTRAINT identity_proofs_proof_id_tenant_key_key;
ALTER TABLE history.identity_proofs DROP CONSTRAINT identity_proofs_pkey;
ALTER TABLE history.identity_proofs DROP COLUMN tenant_key;
ALTER TABLE history.identity_proofs ADD PRIMARY KEY (proof_key);
ALTER TABLE history.identity_proofs ADD UNIQUE (proof_id);

ALTER TABLE history.accounts DROP CONSTRAINT accounts_account_id_tenant_key_key;
ALTER TABLE history.accounts DROP CONSTRAINT accounts_pkey;
ALTER TABLE history.accounts DROP COLUMN tenant_key;
ALTER TABLE history.accounts ADD PRIMARY KEY (account_key);
ALTER TABLE history.accounts ADD UNIQUE (account_id);

ALTER TABLE history.memberships ADD FOREIGN KEY (account_key) REFERENCES history.accounts;
ALTER TABLE history.messages ADD FOREIGN KEY (author_key) REFERENCES history.accounts;
ALTER TABLE history.identity_proofs ADD FOREIGN KEY (account_a_key) REFERENCES history.accounts;
ALTER TABLE history.identity_proofs ADD FOREIGN KEY (account_b_key) REFERENCES history.accounts;
ALTER TABLE history.conversation_authors ADD FOREIGN KEY (author_key) REFERENCES history.accounts;
ALTER TABLE history.runs ADD FOREIGN KEY (agent_key) REFERENCES history.accounts;
ALTER TABLE history.runs ADD FOREIGN KEY (requester_key) REFERENCES history.accounts;
ALTER TABLE history.conversation_search_events ADD FOREIGN KEY (agent_key) REFERENCES history.accounts;
ALTER TABLE history.account_erasures ADD FOREIGN KEY (account_key) REFERENCES history.accounts;

ALTER TABLE history.tenants DROP CONSTRAINT tenants_id_format;
ALTER TABLE history.tenants ALTER COLUMN tenant_key DROP IDENTITY;
ALTER TABLE history.tenants ADD CONSTRAINT tenants_built_in_only CHECK (tenant_key = 1);
COMMENT ON TABLE history.tenants IS 'Tenants (the distribution key); one built-in tenant until the SQL surface names one';

COMMIT;
