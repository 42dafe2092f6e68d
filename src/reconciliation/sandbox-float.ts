import { Injectable } from '@nestjs/common';
import type { OperatorBalance, ReconciledRail } from '../rails/operator-statement';
import { OurMovementsRepository } from './our-movements.repository';

/** The simulated operator accounts hold shillings, as the Kenyan operators they play. */
const SANDBOX_CURRENCY = 'KES';
/** The simulated accounts open empty, before anything was ever moved. */
const OPENED = new Date(0);

/**
 * The sandbox rails' operator balance (SANDBOX_BALANCES): a simulator keeps no account, and moves exactly what we
 * asked it for with the outcome its numbers decide, so its account holds every movement of the rail our records show
 * succeeded, IN minus OUT, since it opened empty (a rail that only pays out runs below zero: the float is a check
 * of the ledger's roll-forward, not a funding limit). `recon:run` on the sandbox then completes with a balance line,
 * zero while nothing is off (docs/decisions.md).
 */
@Injectable()
export class SandboxFloat {
  constructor(private readonly ours: OurMovementsRepository) {}

  async balance(rail: ReconciledRail): Promise<OperatorBalance> {
    const at = new Date();
    const amount = await this.ours.netSucceeded(rail, SANDBOX_CURRENCY, { from: OPENED, to: at });
    return {
      amount,
      currency: SANDBOX_CURRENCY,
      at,
      evidence: { simulator: rail, derived_from: 'our records', opened: OPENED.toISOString() },
    };
  }
}
