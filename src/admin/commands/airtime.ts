import { Command } from 'commander';
import { recipientResult } from '../../airtime/airtime';
import { AirtimeProcessingService } from '../../airtime/airtime-processing.service';
import { CliError, json, requireClient, RunCommand } from './command';

/** An operator's resolution of a processing or jammed airtime recipient. */
export function addAirtimeCommands(program: Command, run: RunCommand): void {
  program
    .command('airtime:resolve')
    .description("send (SUCCESSFUL) or return to the float (FAILED) a processing or jammed airtime recipient's hold, and send its callback")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--reference <reference>', "the airtime request's reference")
    .requiredOption('--phone <number>', "the recipient's phone number")
    .requiredOption('--status <status>', 'SUCCESSFUL or FAILED')
    .action((opts, cmd) =>
      run(async (app) => {
        if (opts.status !== 'SUCCESSFUL' && opts.status !== 'FAILED') throw new CliError('--status must be SUCCESSFUL or FAILED');
        const client = await requireClient(app, opts.client);
        const recipient = await app.get(AirtimeProcessingService).resolveByOperator(client.id, opts.reference, opts.phone, opts.status);
        return { client_code: client.code, ...recipientResult(recipient) };
      }, json(cmd)),
    );
}
