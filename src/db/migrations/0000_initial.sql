CREATE TABLE "advances" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employee_id" uuid NOT NULL,
	"amount" numeric(78, 0),
	"status" text DEFAULT 'pending' NOT NULL,
	"tx_hash" text,
	"claimed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_authorizations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employer_id" uuid NOT NULL,
	"label" text NOT NULL,
	"agent_identifier" text NOT NULL,
	"identity_scheme" text DEFAULT 'none' NOT NULL,
	"hmac_secret_ciphertext" text,
	"per_tx_cap" numeric(78, 0) NOT NULL,
	"per_day_cap" numeric(78, 0) NOT NULL,
	"elevated_per_tx_cap" numeric(78, 0),
	"elevated_per_day_cap" numeric(78, 0),
	"velocity_per_minute" integer DEFAULT 5 NOT NULL,
	"allowed_recipients" jsonb,
	"paused_at" timestamp with time zone,
	"pause_reason" text,
	"per_tx_cap_original" numeric(78, 0),
	"cap_halved_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_authorizations_identity_scheme" CHECK (identity_scheme IN ('none', 'hmac', 'erc8004', 'ed25519')),
	CONSTRAINT "agent_authorizations_caps_positive" CHECK ("agent_authorizations"."per_tx_cap" > 0 AND "agent_authorizations"."per_day_cap" > 0),
	CONSTRAINT "agent_authorizations_velocity_positive" CHECK ("agent_authorizations"."velocity_per_minute" > 0)
);
--> statement-breakpoint
CREATE TABLE "agent_decisions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employer_id" uuid NOT NULL,
	"agent_identifier" text,
	"kind" text NOT NULL,
	"plan" jsonb NOT NULL,
	"status" text DEFAULT 'proposed' NOT NULL,
	"executed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_decisions_status" CHECK (status IN ('proposed', 'executing', 'executed', 'rejected'))
);
--> statement-breakpoint
CREATE TABLE "agent_pay_calls" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"authorization_id" uuid NOT NULL,
	"employer_id" uuid NOT NULL,
	"recipient_wallet" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"reference" text,
	"memo" text,
	"status" text DEFAULT 'reserved' NOT NULL,
	"tx_hash" text,
	"fee_payment_id" uuid,
	"failure_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"settled_at" timestamp with time zone,
	CONSTRAINT "agent_pay_calls_status" CHECK (status IN ('reserved', 'paid', 'released')),
	CONSTRAINT "agent_pay_calls_amount_positive" CHECK ("agent_pay_calls"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "agent_registrations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"identifier" text NOT NULL,
	"display_name" text NOT NULL,
	"description" text,
	"erc8004_agent_id" text,
	"solana_public_key" text,
	"owner_address" text,
	"capabilities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"fee_payment_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_signature_replays" (
	"signature_hash" text PRIMARY KEY NOT NULL,
	"agent_identifier" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "announcement_dismissals" (
	"announcement_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"dismissed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "announcement_dismissals_announcement_id_user_id_pk" PRIMARY KEY("announcement_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "announcements" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"severity" text DEFAULT 'info' NOT NULL,
	"audience" text DEFAULT 'all' NOT NULL,
	"published_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"link_url" text,
	"link_label" text,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "announcements_title_length" CHECK (char_length("announcements"."title") BETWEEN 1 AND 120),
	CONSTRAINT "announcements_body_length" CHECK (char_length("announcements"."body") BETWEEN 1 AND 600),
	CONSTRAINT "announcements_severity" CHECK (severity IN ('info', 'success', 'warning', 'error')),
	CONSTRAINT "announcements_audience" CHECK (audience IN ('all', 'employers', 'employees', 'admins'))
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"actor_user_id" text,
	"actor_kind" text NOT NULL,
	"action" text NOT NULL,
	"employer_id" uuid,
	"target_type" text,
	"target_id" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"request_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "audit_log_actor_kind" CHECK (actor_kind IN ('user', 'admin', 'agent', 'system'))
);
--> statement-breakpoint
CREATE TABLE "bank_accounts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employee_id" uuid NOT NULL,
	"bridge_account_id" text NOT NULL,
	"destination_type" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "bank_accounts_destination_type" CHECK (destination_type IN ('ach', 'sepa', 'spei', 'pix'))
);
--> statement-breakpoint
CREATE TABLE "cards" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employee_id" uuid NOT NULL,
	"bridge_card_id" text,
	"status" text DEFAULT 'requested' NOT NULL,
	"last4" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "compliance_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employer_id" uuid,
	"employee_id" uuid,
	"wallet_address" text NOT NULL,
	"policy_id" bigint NOT NULL,
	"authorized" boolean NOT NULL,
	"risk_score" integer NOT NULL,
	"result" text NOT NULL,
	"event_type" text NOT NULL,
	"reasons" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"checked_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "compliance_events_result" CHECK (result IN ('CLEAR', 'BLOCKED'))
);
--> statement-breakpoint
CREATE TABLE "email_outbox" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"to_address" text NOT NULL,
	"subject" text NOT NULL,
	"body_text" text NOT NULL,
	"body_html" text,
	"dedupe_key" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "email_outbox_status" CHECK (status IN ('queued', 'sent', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "employees" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employer_id" uuid NOT NULL,
	"user_id" text,
	"email" text NOT NULL,
	"full_name" text NOT NULL,
	"wallet_address" text,
	"solana_wallet_address" text,
	"annual_salary" numeric(78, 0) DEFAULT 0 NOT NULL,
	"department" text,
	"cost_centre" text,
	"status" text DEFAULT 'active' NOT NULL,
	"payroll_paused" boolean DEFAULT false NOT NULL,
	"manual_review_status" text DEFAULT 'none' NOT NULL,
	"manual_review_note" text,
	"manual_reviewed_at" timestamp with time zone,
	"manual_reviewed_by" text,
	"bridge_customer_id" text,
	"kyc_status" text DEFAULT 'not_started' NOT NULL,
	"invited_at" timestamp with time zone,
	"removed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "employees_status" CHECK (status IN ('active', 'removed')),
	CONSTRAINT "employees_manual_review_status" CHECK (manual_review_status IN ('none', 'pending', 'approved', 'rejected')),
	CONSTRAINT "employees_annual_salary_nonnegative" CHECK ("employees"."annual_salary" >= 0),
	CONSTRAINT "employees_email_lower" CHECK ("employees"."email" = lower("employees"."email")),
	CONSTRAINT "employees_wallet_format" CHECK ("employees"."wallet_address" ~ '^0x[0-9a-fA-F]{40}$')
);
--> statement-breakpoint
CREATE TABLE "employers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"owner_user_id" text NOT NULL,
	"name" text NOT NULL,
	"admin_wallet" text,
	"employer_account_id" text,
	"tip403_policy_id" bigint,
	"agent_key_hash" text,
	"agent_key_prefix" text,
	"agent_key_rotated_at" timestamp with time zone,
	"virtual_master_id" text,
	"virtual_master_address" text,
	"virtual_master_salt" text,
	"virtual_master_tx_hash" text,
	"virtual_master_next_nonce" numeric(78, 0),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "employers_name_length" CHECK (char_length("employers"."name") BETWEEN 1 AND 200),
	CONSTRAINT "employers_virtual_master_id_format" CHECK ("employers"."virtual_master_id" ~ '^0x[0-9a-f]{8}$')
);
--> statement-breakpoint
CREATE TABLE "escrows" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employer_id" uuid NOT NULL,
	"poster_authorization_id" uuid,
	"poster_agent_identifier" text NOT NULL,
	"worker_wallet_address" text NOT NULL,
	"worker_agent_identifier" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"rubric_prompt" text NOT NULL,
	"status" text DEFAULT 'posted' NOT NULL,
	"escrow_pda" text,
	"requested_expiry_hours" integer NOT NULL,
	"applied_expiry_hours" integer NOT NULL,
	"worker_reputation_tier" text NOT NULL,
	"worker_attestation_count" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"deliverable_uri" text,
	"deliverable_sha256" text,
	"deliverable_content" "bytea",
	"validator_verdict" text,
	"validator_confidence" integer,
	"validator_reasoning" text,
	"validator_model" text,
	"sanitizer_flagged" boolean DEFAULT false NOT NULL,
	"escalated_at" timestamp with time zone,
	"escalation_reason" text,
	"signatures" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"fee_payment_id" uuid,
	"delivered_at" timestamp with time zone,
	"verdict_at" timestamp with time zone,
	"finalized_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "escrows_status" CHECK (status IN ('posted', 'delivered', 'validating', 'settled', 'rejected_refunded', 'expired_refunded')),
	CONSTRAINT "escrows_tier" CHECK (worker_reputation_tier IN ('unknown', 'new', 'established', 'trusted')),
	CONSTRAINT "escrows_amount_range" CHECK ("escrows"."amount" > 0 AND "escrows"."amount" <= 100000000),
	CONSTRAINT "escrows_rubric_length" CHECK (char_length("escrows"."rubric_prompt") <= 2000),
	CONSTRAINT "escrows_expiry_range" CHECK ("escrows"."requested_expiry_hours" BETWEEN 1 AND 168)
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"route" text NOT NULL,
	"request_hash" text NOT NULL,
	"status" text DEFAULT 'in_progress' NOT NULL,
	"response_status" integer,
	"response_headers" jsonb,
	"response_body" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_scope_key_route_pk" PRIMARY KEY("scope","key","route"),
	CONSTRAINT "idempotency_keys_status" CHECK (status IN ('in_progress', 'completed'))
);
--> statement-breakpoint
CREATE TABLE "indexer_cursors" (
	"name" text PRIMARY KEY NOT NULL,
	"last_block" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mpp_channel_store" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mpp_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"payer" text NOT NULL,
	"route" text NOT NULL,
	"employer_id" uuid,
	"deposit" numeric(78, 0) NOT NULL,
	"accepted_cumulative" numeric(78, 0) DEFAULT 0 NOT NULL,
	"spent" numeric(78, 0) DEFAULT 0 NOT NULL,
	"settled" numeric(78, 0) DEFAULT 0 NOT NULL,
	"last_voucher" jsonb,
	"status" text DEFAULT 'open' NOT NULL,
	"opened_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone,
	CONSTRAINT "mpp_sessions_status" CHECK (status IN ('open', 'closing', 'closed')),
	CONSTRAINT "mpp_sessions_spent_within_voucher" CHECK ("mpp_sessions"."spent" <= "mpp_sessions"."accepted_cumulative")
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employer_id" uuid NOT NULL,
	"type" text NOT NULL,
	"severity" text NOT NULL,
	"title" text NOT NULL,
	"body" text,
	"link_url" text,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"dedupe_key" text,
	"read_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notifications_severity" CHECK (severity IN ('info', 'success', 'warning', 'error'))
);
--> statement-breakpoint
CREATE TABLE "oauth_clients" (
	"client_id" text PRIMARY KEY NOT NULL,
	"client_name" text,
	"redirect_uris" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"user_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"scope" text NOT NULL,
	"resource" text,
	"family_id" uuid,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_refresh_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"token_hash" text NOT NULL,
	"family_id" uuid NOT NULL,
	"client_id" text NOT NULL,
	"user_id" text NOT NULL,
	"scope" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"replaced_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "offramp_transfers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employee_id" uuid NOT NULL,
	"employer_id" uuid NOT NULL,
	"bank_account_id" uuid NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"destination_type" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"bridge_transfer_id" text,
	"failure_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "offramp_transfers_amount_positive" CHECK ("offramp_transfers"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "payment_items" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid NOT NULL,
	"employer_id" uuid NOT NULL,
	"employee_id" uuid NOT NULL,
	"chain" text DEFAULT 'tempo' NOT NULL,
	"wallet_address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"memo" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"reason" text,
	"tx_hash" text,
	"log_index" integer,
	"block_number" bigint,
	"finalized_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_items_status" CHECK (status IN ('pending', 'submitted', 'paid', 'failed', 'policy_rejected')),
	CONSTRAINT "payment_items_chain" CHECK (chain IN ('tempo', 'solana')),
	CONSTRAINT "payment_items_amount_positive" CHECK ("payment_items"."amount" > 0),
	CONSTRAINT "payment_items_memo_format" CHECK ("payment_items"."memo" ~ '^0x[0-9a-fA-F]{64}$')
);
--> statement-breakpoint
CREATE TABLE "payment_receipts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"payment_id" uuid,
	"session_id" text,
	"route" text NOT NULL,
	"rail" text NOT NULL,
	"payer" text,
	"amount" numeric(78, 0) NOT NULL,
	"reference" text,
	"status" text NOT NULL,
	"receipt" jsonb NOT NULL,
	"employer_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_receipts_rail" CHECK (rail IN ('A', 'B', 'C', 'card'))
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"proof_key" text NOT NULL,
	"rail" text NOT NULL,
	"network" text NOT NULL,
	"route" text NOT NULL,
	"payer" text,
	"amount" numeric(78, 0) NOT NULL,
	"asset" text,
	"status" text DEFAULT 'claimed' NOT NULL,
	"reference" text,
	"http_status" integer,
	"request_id" text,
	"employer_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"settled_at" timestamp with time zone,
	CONSTRAINT "payments_rail" CHECK (rail IN ('A', 'B', 'C', 'card')),
	CONSTRAINT "payments_status" CHECK (status IN ('claimed', 'settled', 'voided', 'unknown')),
	CONSTRAINT "payments_amount_nonnegative" CHECK ("payments"."amount" >= 0)
);
--> statement-breakpoint
CREATE TABLE "payroll_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employer_id" uuid NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"total_amount" numeric(78, 0) NOT NULL,
	"recipient_count" integer NOT NULL,
	"pay_period_start" timestamp with time zone,
	"pay_period_end" timestamp with time zone,
	"decision_id" uuid,
	"created_by" text,
	"tx_hash" text,
	"block_number" bigint,
	"failure_reason" text,
	"submitted_at" timestamp with time zone,
	"finalized_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payroll_runs_status" CHECK (status IN ('draft', 'submitted', 'confirmed', 'failed')),
	CONSTRAINT "payroll_runs_total_nonnegative" CHECK ("payroll_runs"."total_amount" >= 0)
);
--> statement-breakpoint
CREATE TABLE "reputation_writes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"write_type" text NOT NULL,
	"subject" text NOT NULL,
	"source_type" text NOT NULL,
	"source_id" text NOT NULL,
	"amount" numeric(78, 0),
	"score" integer,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"chain_reference" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"written_at" timestamp with time zone,
	CONSTRAINT "reputation_writes_status" CHECK (status IN ('pending', 'written', 'failed')),
	CONSTRAINT "reputation_writes_kind" CHECK (kind IN ('attestation', 'erc8004_feedback'))
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text,
	"email_verified" boolean DEFAULT false NOT NULL,
	"display_name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "virtual_address_inflows" (
	"tx_hash" text NOT NULL,
	"log_index" integer NOT NULL,
	"employer_id" uuid NOT NULL,
	"employee_id" uuid,
	"token_address" text NOT NULL,
	"virtual_address" text NOT NULL,
	"user_tag" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"block_number" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "virtual_address_inflows_tx_hash_log_index_pk" PRIMARY KEY("tx_hash","log_index")
);
--> statement-breakpoint
CREATE TABLE "wallet_blocklist" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employer_id" uuid,
	"wallet_address" text NOT NULL,
	"source" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "advances" ADD CONSTRAINT "advances_employee_id_employees_id_fk" FOREIGN KEY ("employee_id") REFERENCES "public"."employees"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_authorizations" ADD CONSTRAINT "agent_authorizations_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_decisions" ADD CONSTRAINT "agent_decisions_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_pay_calls" ADD CONSTRAINT "agent_pay_calls_authorization_id_agent_authorizations_id_fk" FOREIGN KEY ("authorization_id") REFERENCES "public"."agent_authorizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_pay_calls" ADD CONSTRAINT "agent_pay_calls_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "announcement_dismissals" ADD CONSTRAINT "announcement_dismissals_announcement_id_announcements_id_fk" FOREIGN KEY ("announcement_id") REFERENCES "public"."announcements"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "announcement_dismissals" ADD CONSTRAINT "announcement_dismissals_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "announcements" ADD CONSTRAINT "announcements_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bank_accounts" ADD CONSTRAINT "bank_accounts_employee_id_employees_id_fk" FOREIGN KEY ("employee_id") REFERENCES "public"."employees"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cards" ADD CONSTRAINT "cards_employee_id_employees_id_fk" FOREIGN KEY ("employee_id") REFERENCES "public"."employees"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "compliance_events" ADD CONSTRAINT "compliance_events_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "compliance_events" ADD CONSTRAINT "compliance_events_employee_id_employees_id_fk" FOREIGN KEY ("employee_id") REFERENCES "public"."employees"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "employees" ADD CONSTRAINT "employees_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "employees" ADD CONSTRAINT "employees_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "employees" ADD CONSTRAINT "employees_manual_reviewed_by_users_id_fk" FOREIGN KEY ("manual_reviewed_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "employers" ADD CONSTRAINT "employers_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "escrows" ADD CONSTRAINT "escrows_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "escrows" ADD CONSTRAINT "escrows_poster_authorization_id_agent_authorizations_id_fk" FOREIGN KEY ("poster_authorization_id") REFERENCES "public"."agent_authorizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mpp_sessions" ADD CONSTRAINT "mpp_sessions_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_codes" ADD CONSTRAINT "oauth_codes_client_id_oauth_clients_client_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."oauth_clients"("client_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_codes" ADD CONSTRAINT "oauth_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_refresh_tokens" ADD CONSTRAINT "oauth_refresh_tokens_client_id_oauth_clients_client_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."oauth_clients"("client_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_refresh_tokens" ADD CONSTRAINT "oauth_refresh_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offramp_transfers" ADD CONSTRAINT "offramp_transfers_employee_id_employees_id_fk" FOREIGN KEY ("employee_id") REFERENCES "public"."employees"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offramp_transfers" ADD CONSTRAINT "offramp_transfers_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offramp_transfers" ADD CONSTRAINT "offramp_transfers_bank_account_id_bank_accounts_id_fk" FOREIGN KEY ("bank_account_id") REFERENCES "public"."bank_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_items" ADD CONSTRAINT "payment_items_run_id_payroll_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."payroll_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_items" ADD CONSTRAINT "payment_items_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_items" ADD CONSTRAINT "payment_items_employee_id_employees_id_fk" FOREIGN KEY ("employee_id") REFERENCES "public"."employees"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_receipts" ADD CONSTRAINT "payment_receipts_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_receipts" ADD CONSTRAINT "payment_receipts_session_id_mpp_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."mpp_sessions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_receipts" ADD CONSTRAINT "payment_receipts_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payroll_runs" ADD CONSTRAINT "payroll_runs_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payroll_runs" ADD CONSTRAINT "payroll_runs_decision_id_agent_decisions_id_fk" FOREIGN KEY ("decision_id") REFERENCES "public"."agent_decisions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payroll_runs" ADD CONSTRAINT "payroll_runs_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "virtual_address_inflows" ADD CONSTRAINT "virtual_address_inflows_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "virtual_address_inflows" ADD CONSTRAINT "virtual_address_inflows_employee_id_employees_id_fk" FOREIGN KEY ("employee_id") REFERENCES "public"."employees"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallet_blocklist" ADD CONSTRAINT "wallet_blocklist_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "advances_employee_id_idx" ON "advances" USING btree ("employee_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "advances_one_pending_per_employee" ON "advances" USING btree ("employee_id") WHERE status = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "agent_authorizations_active_identifier_key" ON "agent_authorizations" USING btree ("employer_id","agent_identifier") WHERE revoked_at IS NULL;--> statement-breakpoint
CREATE INDEX "agent_authorizations_identifier_idx" ON "agent_authorizations" USING btree ("agent_identifier");--> statement-breakpoint
CREATE INDEX "agent_decisions_employer_id_idx" ON "agent_decisions" USING btree ("employer_id","created_at");--> statement-breakpoint
CREATE INDEX "agent_pay_calls_authorization_idx" ON "agent_pay_calls" USING btree ("authorization_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "agent_registrations_identifier_key" ON "agent_registrations" USING btree ("identifier");--> statement-breakpoint
CREATE INDEX "agent_signature_replays_expires_idx" ON "agent_signature_replays" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "announcements_published_idx" ON "announcements" USING btree ("published_at");--> statement-breakpoint
CREATE INDEX "audit_log_employer_idx" ON "audit_log" USING btree ("employer_id","created_at");--> statement-breakpoint
CREATE INDEX "audit_log_created_idx" ON "audit_log" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "bank_accounts_employee_bridge_key" ON "bank_accounts" USING btree ("employee_id","bridge_account_id");--> statement-breakpoint
CREATE INDEX "cards_employee_id_idx" ON "cards" USING btree ("employee_id");--> statement-breakpoint
CREATE INDEX "compliance_events_employer_idx" ON "compliance_events" USING btree ("employer_id","checked_at");--> statement-breakpoint
CREATE INDEX "compliance_events_wallet_idx" ON "compliance_events" USING btree ("wallet_address","checked_at");--> statement-breakpoint
CREATE UNIQUE INDEX "email_outbox_dedupe_key" ON "email_outbox" USING btree ("dedupe_key");--> statement-breakpoint
CREATE UNIQUE INDEX "employees_employer_email_key" ON "employees" USING btree ("employer_id","email");--> statement-breakpoint
CREATE INDEX "employees_user_id_idx" ON "employees" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "employees_wallet_address_idx" ON "employees" USING btree ("wallet_address");--> statement-breakpoint
CREATE UNIQUE INDEX "employers_owner_user_id_key" ON "employers" USING btree ("owner_user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "employers_virtual_master_id_key" ON "employers" USING btree ("virtual_master_id");--> statement-breakpoint
CREATE INDEX "escrows_employer_id_idx" ON "escrows" USING btree ("employer_id","created_at");--> statement-breakpoint
CREATE INDEX "escrows_open_expiry_idx" ON "escrows" USING btree ("expires_at") WHERE status IN ('posted', 'delivered', 'validating');--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "mpp_sessions_employer_idx" ON "mpp_sessions" USING btree ("employer_id","opened_at");--> statement-breakpoint
CREATE INDEX "mpp_sessions_payer_idx" ON "mpp_sessions" USING btree ("payer","opened_at");--> statement-breakpoint
CREATE INDEX "notifications_employer_idx" ON "notifications" USING btree ("employer_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "notifications_dedupe_key" ON "notifications" USING btree ("dedupe_key");--> statement-breakpoint
CREATE INDEX "oauth_codes_expires_idx" ON "oauth_codes" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "oauth_refresh_tokens_hash_key" ON "oauth_refresh_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "oauth_refresh_tokens_family_idx" ON "oauth_refresh_tokens" USING btree ("family_id");--> statement-breakpoint
CREATE INDEX "offramp_transfers_employee_id_idx" ON "offramp_transfers" USING btree ("employee_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "offramp_transfers_bridge_transfer_id_key" ON "offramp_transfers" USING btree ("bridge_transfer_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payment_items_run_employee_key" ON "payment_items" USING btree ("run_id","employee_id");--> statement-breakpoint
CREATE INDEX "payment_items_employee_id_idx" ON "payment_items" USING btree ("employee_id","created_at");--> statement-breakpoint
CREATE INDEX "payment_items_employer_id_idx" ON "payment_items" USING btree ("employer_id","created_at");--> statement-breakpoint
CREATE INDEX "payment_receipts_employer_idx" ON "payment_receipts" USING btree ("employer_id","created_at");--> statement-breakpoint
CREATE INDEX "payment_receipts_payment_idx" ON "payment_receipts" USING btree ("payment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_proof_key_key" ON "payments" USING btree ("proof_key");--> statement-breakpoint
CREATE INDEX "payments_employer_idx" ON "payments" USING btree ("employer_id","created_at");--> statement-breakpoint
CREATE INDEX "payments_payer_idx" ON "payments" USING btree ("payer","created_at");--> statement-breakpoint
CREATE INDEX "payroll_runs_employer_id_idx" ON "payroll_runs" USING btree ("employer_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "payroll_runs_tx_hash_key" ON "payroll_runs" USING btree ("tx_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "payroll_runs_decision_id_key" ON "payroll_runs" USING btree ("decision_id");--> statement-breakpoint
CREATE UNIQUE INDEX "reputation_writes_source_key" ON "reputation_writes" USING btree ("source_type","source_id","subject","write_type");--> statement-breakpoint
CREATE INDEX "reputation_writes_subject_idx" ON "reputation_writes" USING btree ("subject");--> statement-breakpoint
CREATE INDEX "reputation_writes_status_idx" ON "reputation_writes" USING btree ("status");--> statement-breakpoint
CREATE INDEX "virtual_address_inflows_employee_idx" ON "virtual_address_inflows" USING btree ("employee_id","block_number");--> statement-breakpoint
CREATE INDEX "virtual_address_inflows_employer_idx" ON "virtual_address_inflows" USING btree ("employer_id","block_number");--> statement-breakpoint
CREATE UNIQUE INDEX "wallet_blocklist_scope_wallet_key" ON "wallet_blocklist" USING btree (coalesce("employer_id"::text, ''),"wallet_address");--> statement-breakpoint
CREATE INDEX "wallet_blocklist_wallet_idx" ON "wallet_blocklist" USING btree ("wallet_address");