ALTER TABLE "employers" ADD COLUMN "pay_schedule" text;--> statement-breakpoint
ALTER TABLE "employers" ADD COLUMN "pay_day" integer;--> statement-breakpoint
ALTER TABLE "employers" ADD COLUMN "pay_anchor_date" date;--> statement-breakpoint
ALTER TABLE "payroll_runs" ADD COLUMN "pay_date" date;--> statement-breakpoint
ALTER TABLE "employers" ADD CONSTRAINT "employers_pay_schedule" CHECK (pay_schedule IN ('monthly', 'semi_monthly', 'biweekly', 'weekly'));--> statement-breakpoint
ALTER TABLE "employers" ADD CONSTRAINT "employers_pay_schedule_anchor" CHECK (("employers"."pay_day" IS NOT NULL) = ("employers"."pay_schedule" IS NOT DISTINCT FROM 'monthly')
        AND ("employers"."pay_anchor_date" IS NOT NULL) = ("employers"."pay_schedule" IS NOT DISTINCT FROM 'weekly' OR "employers"."pay_schedule" IS NOT DISTINCT FROM 'biweekly'));--> statement-breakpoint
ALTER TABLE "employers" ADD CONSTRAINT "employers_pay_day_range" CHECK ("employers"."pay_day" BETWEEN 1 AND 31);