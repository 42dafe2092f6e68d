import { Injectable } from '@nestjs/common';

/** A domain's state for operators to read in /health/ready. */
export type ReadinessReport = () => Promise<Record<string, unknown>>;

/**
 * What domains add to /health/ready (the infrastructure imports no domain): each report is shown under its name and
 * never makes the process unready, which Postgres and Redis alone decide.
 */
@Injectable()
export class ReadinessReports {
  private readonly reports = new Map<string, ReadinessReport>();

  add(name: string, report: ReadinessReport): void {
    this.reports.set(name, report);
  }

  entries(): Array<[string, ReadinessReport]> {
    return [...this.reports];
  }
}
